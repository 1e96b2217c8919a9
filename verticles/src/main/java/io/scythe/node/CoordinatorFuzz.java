package io.scythe.node;

import io.scythe.codec.KryoCodec;
import io.scythe.txn.api.TxnRequest;
import io.vertx.core.buffer.Buffer;

import java.util.Arrays;
import java.util.Random;

/**
 * Malformed, truncated and mutated event-bus messages for the coordinator, as its Kryo codec reads them off the wire:
 * a valid request with a few bytes changed, one cut short, or random bytes behind a plausible length prefix. One
 * generator, used by the suite's fuzz test and by {@code scythe fuzz}.
 */
public final class CoordinatorFuzz {
    private CoordinatorFuzz() {
    }

    /** The wire bytes of {@code request}, as a clustered event bus carries them. */
    public static byte[] wire(final TxnRequest request) {
        final Buffer valid = Buffer.buffer();
        KryoCodec.of(TxnRequest.class).encodeToWire(valid, request);
        return valid.getBytes();
    }

    /** Message {@code i} of a run made from {@code good} (a valid request's wire bytes): its kind is {@code i % 3}. */
    public static byte[] message(final int i, final Random random, final byte[] good) {
        switch (i % 3) {
            case 0 -> { // mutated: a few bytes of a valid message changed
                final byte[] bytes = good.clone();
                for (int m = 1 + random.nextInt(3); m > 0; m--) {
                    bytes[random.nextInt(bytes.length)] = (byte) random.nextInt(256);
                }
                return bytes;
            }
            case 1 -> {
                return Arrays.copyOf(good, random.nextInt(good.length)); // truncated
            }
            default -> { // random, with a plausible length prefix
                final byte[] bytes = new byte[4 + random.nextInt(40)];
                random.nextBytes(bytes);
                System.arraycopy(Buffer.buffer().appendInt(bytes.length - 4).getBytes(), 0, bytes, 0, 4);
                return bytes;
            }
        }
    }
}
