package io.scythe.fabric;

/**
 * A completion queue, polled by one thread (its owner: the event loop whose {@code BridgeVerticle} polls it). For the
 * emulated providers, polling is also what moves the virtual NIC forward: a work request's memory operation is
 * executed once the clock passes its modelled execution time, and its completion is delivered once the clock passes
 * its modelled completion time. Completions of one QP are delivered in posting order.
 */
public interface CompletionQueue extends AutoCloseable {
    /** Returned by {@link #nextEventNs()} when nothing is pending at a known time. */
    long NO_EVENT = Long.MAX_VALUE;

    /**
     * Delivers at most {@code maxCompletions} completions that are due at {@code nowNs}.
     *
     * @return the amount of work done (completions delivered plus operations executed); 0 when idle
     */
    int poll(long nowNs, CompletionHandler handler, int maxCompletions);

    /**
     * The earliest clock time at which {@link #poll} can do more work, as far as this queue knows; {@link #NO_EVENT}
     * when nothing is scheduled (completions that arrive asynchronously, as from a socket, are announced through the
     * {@link #wakeHandler(Runnable) wake handler} instead).
     */
    long nextEventNs();

    /**
     * The time on its NIC's clock ({@link Nic#nicClock()}) at which the completion being delivered completed. Valid
     * only inside the {@link CompletionHandler#onCompletion} call this queue's {@link #poll} makes, for that
     * completion: ibverbs' {@code ibv_wc_read_completion_ts} on a queue created with
     * {@code IBV_WC_EX_WITH_COMPLETION_TIMESTAMP}. A RECV is stamped when it is delivered.
     *
     * @throws FabricException when this provider has no NIC clock to stamp completions with
     */
    default long completionTimestampNs() {
        throw new FabricException(getClass().getSimpleName() + " does not timestamp completions");
    }

    /** Work requests posted on this queue's QPs whose completion has not been delivered yet. */
    int outstanding();

    /**
     * Sets what to run, from any thread, when a completion arrives asynchronously (a RECV from another thread or
     * process, a reply from a socket): the owner's bridge uses it to resume polling.
     */
    void wakeHandler(Runnable wake);

    /** The thread allowed to poll this queue and post on its QPs. */
    Thread owner();

    @Override
    void close();
}
