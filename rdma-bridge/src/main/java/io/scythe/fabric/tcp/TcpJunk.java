package io.scythe.fabric.tcp;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Random;

/**
 * Junk for the tcp verbs server's port: random bytes, frames of every type with random bodies, HELLOs with the right
 * magic and random fields and string lengths, length prefixes past the limits or lying, each cut anywhere. One
 * generator, used by the suite's fuzz test and by {@code scythe fuzz}; each connection carries one piece.
 */
public final class TcpJunk {
    /** What a connection got: closed after at most a refusal, something larger (a server that said too much), no close in time. */
    public enum Outcome { CLOSED, TOO_LONG_REPLY, TIMEOUT }

    private TcpJunk() {
    }

    /** The bytes of junk connection {@code i}: its kind is {@code i % 4}, its content drawn from {@code random}. */
    public static byte[] connection(final int i, final Random random) {
        final ByteArrayOutputStream junk = new ByteArrayOutputStream();
        final ByteBuffer frame = ByteBuffer.allocate(1 << 13).order(ByteOrder.LITTLE_ENDIAN);
        switch (i % 4) {
            case 0 -> { // random bytes
                final byte[] bytes = new byte[random.nextInt(200)];
                random.nextBytes(bytes);
                junk.writeBytes(bytes);
            }
            case 1 -> { // a frame of any type, random body, honest length
                final byte[] body = new byte[random.nextInt(120)];
                random.nextBytes(body);
                frame.putInt(body.length + 1).put((byte) random.nextInt(9)).put(body);
            }
            case 2 -> { // a HELLO with the right magic and version, random fields and string lengths
                frame.putInt(0).put(TcpFrames.HELLO).putInt(TcpFrames.MAGIC).putShort((short) TcpFrames.VERSION);
                for (int f = 0; f < 5; f++) {
                    final int length = random.nextInt(4) == 0 ? random.nextInt(65536) : random.nextInt(40);
                    frame.putShort((short) length);
                    final byte[] bytes = new byte[Math.min(length, random.nextInt(60))];
                    random.nextBytes(bytes);
                    frame.put(bytes);
                }
                frame.putInt(random.nextInt());
                frame.putInt(0, frame.position() - 4);
            }
            default -> { // a length prefix past the limits, or one that lies
                frame.putInt(random.nextBoolean() ? TcpFrames.MAX_FRAME_BYTES + 1 + random.nextInt(1000)
                    : -1 - random.nextInt(1000)).put(TcpFrames.REQUEST).putInt(random.nextInt());
            }
        }
        junk.write(frame.array(), 0, frame.position());
        final byte[] bytes = junk.toByteArray();
        return random.nextInt(3) == 0 && bytes.length > 1 ? Arrays.copyOf(bytes, random.nextInt(bytes.length))
            : bytes; // cut anywhere
    }

    /**
     * Sends {@code bytes} on a fresh connection to the verbs server, half-closes it and reads to the server's close:
     * the server answers junk with at most a refusal ({@link TcpFrames#MAX_HELLO_BYTES}), then closes.
     */
    public static Outcome send(final InetSocketAddress server, final byte[] bytes, final int timeoutMs)
        throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(server, timeoutMs);
            socket.setSoTimeout(timeoutMs);
            try {
                socket.getOutputStream().write(bytes);
                socket.getOutputStream().flush();
                socket.shutdownOutput();
            } catch (final IOException closedWhileWriting) {
                return Outcome.CLOSED;
            }
            final byte[] answer;
            try {
                answer = socket.getInputStream().readAllBytes();
            } catch (final SocketTimeoutException e) {
                return Outcome.TIMEOUT;
            } catch (final IOException reset) {
                return Outcome.CLOSED;
            }
            return answer.length < TcpFrames.MAX_HELLO_BYTES ? Outcome.CLOSED : Outcome.TOO_LONG_REPLY;
        }
    }
}
