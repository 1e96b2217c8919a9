package io.scythe.fabric.tcp;

/**
 * The frames of the tcp provider's wire protocol, all little-endian, each preceded by its length:
 *
 * <pre>
 *  frame:     u32 length of what follows | u8 type | body
 *
 *  HELLO (1), initiator to responder, first frame of a connection:
 *             u32 magic "SCYT" | u16 version | u16 auth length | auth bytes | str cluster | str initiator node |
 *             str target node | u32 initiator QP number                   (str = u16 length | UTF-8 bytes)
 *      auth: empty without a cluster secret; with one: u64 sender's time (ms) | 16 B random nonce |
 *            32 B HMAC-SHA256(secret; "scythe-tcp-hello", cluster, initiator, target, time, nonce)
 *  HELLO_OK (2):      u32 responder QP number [| 32 B HMAC-SHA256(secret; "scythe-tcp-ok", cluster, responder,
 *                     initiator, nonce) with a secret]
 *  HELLO_REFUSED (3): u16 reason code | str message   (then the responder closes the connection)
 *  REQUEST (4): u32 count | count x request, in posting order (one doorbell batch = one frame):
 *      0 u8 opcode | 1 u8 flags (1 signaled) | 2 u16 reserved | 4 u32 length | 8 u64 sequence |
 *      16 u64 remote address | 24 u32 rkey | 28 u32 reserved | 32 u64 compare-or-add | 40 u64 swap |
 *      48 payload (length bytes, WRITE and SEND only)
 *  RESPONSE (5): u32 count | count x (u64 sequence | u8 status | 3 reserved | u32 data length | data)
 *      data: READ data, or the 8-byte old value of an atomic; nothing for WRITE and SEND
 *  RESET (6):  the requester drained a failed QP and asks the responder to leave its error state
 *  REVOKE (7): the sender revoked the queue pair: every later verb on it fails with REVOKED, both ways
 * </pre>
 */
public final class TcpFrames {
    public static final int MAGIC = 0x54594353; // "SCYT"
    public static final int VERSION = 1;

    public static final byte HELLO = 1;
    public static final byte HELLO_OK = 2;
    public static final byte HELLO_REFUSED = 3;
    public static final byte REQUEST = 4;
    public static final byte RESPONSE = 5;
    public static final byte RESET = 6;
    public static final byte REVOKE = 7;

    public static final int REQUEST_HEADER_BYTES = 48;
    public static final int RESPONSE_HEADER_BYTES = 16;
    public static final int FLAG_SIGNALED = 1;

    /** Largest frame accepted (a longer length is a malformed peer, and the connection is closed). */
    public static final int MAX_FRAME_BYTES = 64 << 20;
    /** Largest handshake frame. */
    public static final int MAX_HELLO_BYTES = 4096;

    public static final int REFUSED_PROTOCOL = 1;
    public static final int REFUSED_CLUSTER = 2;
    public static final int REFUSED_NODE = 3;
    public static final int REFUSED_FENCED = 4;
    public static final int REFUSED_AUTH = 5;

    public static final int NONCE_BYTES = 16;
    public static final int AUTH_BYTES = 8 + NONCE_BYTES + 32;
    /** How far apart a HELLO's time may be from the responder's clock. */
    public static final long AUTH_WINDOW_MS = 60_000;

    private TcpFrames() {
    }
}
