package io.scythe.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Random;

/**
 * Random and malformed requests to a node's HTTP server ({@link NodeMetrics}: /health, /metrics, /copies,
 * /peers/probe): bad methods, bad and huge paths, huge and broken headers, bodies that lie about their length, garbage
 * bytes, requests cut anywhere and partial requests left open (slowloris). One generator, used by the suite's fuzz test
 * and by {@code scythe fuzz}. Each request goes on a fresh connection and is classified by what came back.
 */
public final class HttpFuzz {
    /** What a request got: a reply with a status below 400, an error reply, a close with no reply, nothing in time. */
    public enum Outcome { REPLY, ERROR_REPLY, CLOSED, TIMEOUT }

    private static final String[] PATHS = {"/health", "/metrics", "/copies", "/peers/probe", "/peers/probe?peer=",
        "/", "", "*", "/../../etc/passwd", "/health?%%%", "/%00", "http://x/health", "/peers/probe?peer=%ff%fe"};
    private static final String[] METHODS = {"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "TRACE", "CONNECT",
        "PATCH", "BREW", "G\u00c9T", "", "GET GET"};

    private HttpFuzz() {
    }

    /** Request {@code i} of a run: its kind is {@code i % 8}, its content drawn from {@code random}. */
    public static byte[] request(final int i, final Random random) {
        final StringBuilder s = new StringBuilder();
        switch (i % 8) {
            case 0 -> { // a random method on a known or odd path
                s.append(pick(random, METHODS)).append(' ').append(pick(random, PATHS)).append(randomText(random, 8))
                    .append(" HTTP/1.1\r\nHost: x\r\n\r\n");
            }
            case 1 -> { // a huge path
                s.append("GET /").append("a".repeat(1 + random.nextInt(20_000))).append(" HTTP/1.1\r\nHost: x\r\n\r\n");
            }
            case 2 -> { // huge or many headers
                s.append("GET /health HTTP/1.1\r\nHost: x\r\n");
                if (random.nextBoolean()) {
                    s.append("X-Big: ").append("b".repeat(1 + random.nextInt(40_000))).append("\r\n");
                } else {
                    for (int h = 0; h < 1 + random.nextInt(2_000); h++) {
                        s.append("X-").append(h).append(": ").append(randomText(random, 20)).append("\r\n");
                    }
                }
                s.append("\r\n");
            }
            case 3 -> { // a body that lies about its length, or chunked garbage
                s.append(pick(random, METHODS)).append(" /health HTTP/1.1\r\nHost: x\r\n");
                if (random.nextBoolean()) {
                    s.append("Content-Length: ").append(random.nextBoolean() ? String.valueOf(random.nextLong())
                        : String.valueOf(random.nextInt(100_000))).append("\r\n\r\n").append(randomText(random, 200));
                } else {
                    s.append("Transfer-Encoding: chunked\r\n\r\n").append(Integer.toHexString(random.nextInt()))
                        .append("\r\n").append(randomText(random, 100)).append("\r\n");
                }
            }
            case 4 -> { // broken request lines and header syntax
                s.append(pick(random, new String[] {"GET /health HTTP/9.9", "GET /health", "GET  HTTP/1.1",
                    "\r\n\r\nGET /health HTTP/1.1", "GET /health HTTP/1.1\nHost x", "GET /health HTTP/1.1\r\n: \r\n"}))
                    .append("\r\n").append(random.nextBoolean() ? "Host: x\r\n" : "Host:\r\nHost: y\r\n")
                    .append(random.nextBoolean() ? "Connection: upgrade\r\nUpgrade: websocket\r\n" : "").append("\r\n");
            }
            case 5 -> { // garbage bytes
                final byte[] bytes = new byte[random.nextInt(2_000)];
                random.nextBytes(bytes);
                return bytes;
            }
            case 6 -> { // a good request mutated: bytes flipped, inserted or cut
                final byte[] good = ("GET " + pick(random, PATHS) + " HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1);
                final int cut = random.nextInt(4) == 0 ? random.nextInt(good.length) : good.length;
                final byte[] bytes = java.util.Arrays.copyOf(good, cut);
                for (int m = random.nextInt(4); m > 0 && bytes.length > 0; m--) {
                    bytes[random.nextInt(bytes.length)] = (byte) random.nextInt(256);
                }
                return bytes;
            }
            default -> { // many pipelined requests, good and bad
                for (int r = 0; r < 1 + random.nextInt(50); r++) {
                    s.append(pick(random, METHODS)).append(' ').append(pick(random, PATHS))
                        .append(" HTTP/1.1\r\nHost: x\r\n\r\n");
                }
            }
        }
        return s.toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    /** A request cut short, to be left open (slowloris): the server must close it, not wait forever. */
    public static byte[] partial(final Random random) {
        final String whole = "GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: " + randomText(random, 40) + "\r\n";
        return whole.substring(0, 1 + random.nextInt(whole.length() - 1)).getBytes(StandardCharsets.ISO_8859_1);
    }

    /**
     * Sends {@code bytes} on a fresh connection, half-closes it and reads what comes back, up to {@code timeoutMs}:
     * the first status line decides between a reply and an error reply; no bytes at all is a close.
     */
    public static Outcome send(final InetSocketAddress server, final byte[] bytes, final int timeoutMs)
        throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(server, timeoutMs);
            socket.setSoTimeout(timeoutMs);
            final OutputStream out = socket.getOutputStream();
            try {
                out.write(bytes);
                out.flush();
                socket.shutdownOutput();
            } catch (final IOException e) {
                return Outcome.CLOSED; // the server closed while we wrote (a refused header, say)
            }
            final byte[] head = new byte[12];
            int n = 0;
            final InputStream in = socket.getInputStream();
            try {
                for (int r; n < head.length && (r = in.read(head, n, head.length - n)) > 0; ) {
                    n += r;
                }
                in.transferTo(OutputStream.nullOutputStream()); // to the server's close
            } catch (final SocketTimeoutException e) {
                return n == 0 ? Outcome.TIMEOUT : status(head, n);
            } catch (final IOException e) {
                return n == 0 ? Outcome.CLOSED : status(head, n); // reset
            }
            return n == 0 ? Outcome.CLOSED : status(head, n);
        }
    }

    private static Outcome status(final byte[] head, final int n) {
        final String line = new String(head, 0, n, StandardCharsets.ISO_8859_1);
        if (!line.startsWith("HTTP/1.") || line.length() < 12) {
            return Outcome.ERROR_REPLY;
        }
        return line.charAt(9) < '4' ? Outcome.REPLY : Outcome.ERROR_REPLY;
    }

    private static String pick(final Random random, final String[] choices) {
        return choices[random.nextInt(choices.length)];
    }

    private static String randomText(final Random random, final int max) {
        final char[] c = new char[random.nextInt(max + 1)];
        for (int k = 0; k < c.length; k++) {
            c[k] = (char) (random.nextInt(4) == 0 ? random.nextInt(256) : 'a' + random.nextInt(26));
        }
        return new String(c);
    }
}
