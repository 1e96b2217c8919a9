package io.scythe.txn.onesided;

import io.scythe.bridge.RdmaChannel;
import io.scythe.bridge.VerbCallback;
import io.vertx.core.Future;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * One-sided verbs of the commit path posted with a {@link VerbCallback} (no promise, future or listener per verb) on
 * a loop's channel future ({@code TxnRuntime#channel}): at once when the channel is there and its listeners would run
 * inline ({@link Futures#then}'s case, the cached channel), else once it is. The callback is called exactly once; it
 * must not throw (a throw of the post itself, e.g. a malformed request, is passed to it as {@code compose} passed it
 * to the future).
 */
public final class Verbs {
    private Verbs() {
    }

    /** READ of {@code length} bytes at {@code remoteAddress} into {@code dst}, reported to {@code done}. */
    public static void read(final Future<RdmaChannel> channel, final long remoteAddress, final int rkey,
                            final MutableDirectBuffer dst, final int dstOffset, final int length,
                            final VerbCallback done) {
        if (!Futures.ready(channel)) {
            later(channel, done, ch -> ch.read(remoteAddress, rkey, dst, dstOffset, length, done));
            return;
        }
        try {
            channel.result().read(remoteAddress, rkey, dst, dstOffset, length, done);
        } catch (final RuntimeException e) {
            done.done(0, e);
        }
    }

    /** WRITE of {@code length} bytes of {@code src} at {@code remoteAddress}, reported to {@code done}. */
    public static void write(final Future<RdmaChannel> channel, final long remoteAddress, final int rkey,
                             final DirectBuffer src, final int srcOffset, final int length, final VerbCallback done) {
        if (!Futures.ready(channel)) {
            later(channel, done, ch -> ch.write(remoteAddress, rkey, src, srcOffset, length, done));
            return;
        }
        try {
            channel.result().write(remoteAddress, rkey, src, srcOffset, length, done);
        } catch (final RuntimeException e) {
            done.done(0, e);
        }
    }

    /** Posts with {@code post} once {@code channel} is there (the slow case: a channel still connecting). */
    private static void later(final Future<RdmaChannel> channel, final VerbCallback done,
                              final java.util.function.Consumer<RdmaChannel> post) {
        channel.onComplete((ch, failure) -> {
            if (failure != null) {
                done.done(0, failure);
                return;
            }
            try {
                post.accept(ch);
            } catch (final RuntimeException e) {
                done.done(0, e);
            }
        });
    }
}
