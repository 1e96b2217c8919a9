package io.scythe.fabric;

/**
 * Status of a work completion, after ibverbs' {@code ibv_wc_status} where one exists. Codes are stable (they cross
 * the wire in the tcp provider). Any status but {@link #SUCCESS} moves the queue pair to {@link QpState#ERROR}, and
 * every work request posted after the failed one completes with {@link #WR_FLUSH_ERROR}, as on a real RC QP.
 */
public enum WcStatus {
    SUCCESS(0, "success"),
    /** The local buffer is too small for the data, or a READ/atomic target is not writable. */
    LOCAL_LENGTH_ERROR(1, "local buffer too small for the transfer"),
    /** The work request itself is malformed (negative length, missing buffer, size above the QP's limit). */
    LOCAL_QP_OPERATION_ERROR(2, "malformed work request"),
    /** The remote range is outside the region, the rkey is unknown, or the region was deregistered. */
    REMOTE_ACCESS_ERROR(3, "remote access error: bad rkey, deregistered region, or range outside the region"),
    /** The responder refused the request: a misaligned atomic or an unsupported opcode. */
    REMOTE_INVALID_REQUEST(4, "remote invalid request: misaligned atomic or unsupported operation"),
    /** A SEND found no posted receive buffer, or one too small for it (receiver not ready). */
    RNR_RETRY_EXCEEDED(5, "receiver not ready: no posted receive buffer large enough"),
    /** The work request was not executed because an earlier one on the same QP failed. */
    WR_FLUSH_ERROR(6, "flushed: an earlier work request on this queue pair failed"),
    /** The responder revoked this queue pair (the peer was fenced); it can never be used again. */
    REVOKED(7, "queue pair revoked by the responder: this peer was fenced"),
    /** The peer did not answer: its process or connection is gone. */
    TRANSPORT_RETRY_EXCEEDED(8, "transport retry exceeded: the peer is unreachable"),
    /** The remote side failed while executing the request for a reason not listed above. */
    REMOTE_OPERATION_ERROR(9, "remote operation error");

    private static final WcStatus[] BY_CODE = values();

    private final int code;
    private final String description;

    WcStatus(final int code, final String description) {
        this.code = code;
        this.description = description;
    }

    public int code() {
        return code;
    }

    public String description() {
        return description;
    }

    public boolean isSuccess() {
        return this == SUCCESS;
    }

    public static WcStatus fromCode(final int code) {
        if (code < 0 || code >= BY_CODE.length) {
            throw new IllegalArgumentException("unknown completion status code=" + code);
        }
        return BY_CODE[code];
    }
}
