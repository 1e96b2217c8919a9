package io.scythe.fabric;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * A cluster's shared secret and the proofs made from it (HMAC-SHA256): peers prove they know it without sending it,
 * e.g. in the tcp fabric's handshake, and derived tags keep peers without it out of the cluster's membership.
 */
public final class ClusterSecret {
    public static final int MAC_BYTES = 32;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final SecretKeySpec key;

    public ClusterSecret(final String secret) {
        if (secret == null || secret.isEmpty()) {
            throw new IllegalArgumentException("cluster secret must not be empty");
        }
        this.key = new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256");
    }

    /** HMAC-SHA256 over {@code parts}, each length-prefixed (so no two different part lists collide). */
    public byte[] mac(final byte[]... parts) {
        try {
            final Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(key);
            for (final byte[] part : parts) {
                mac.update(new byte[] {(byte) (part.length >>> 24), (byte) (part.length >>> 16),
                    (byte) (part.length >>> 8), (byte) part.length});
                mac.update(part);
            }
            return mac.doFinal();
        } catch (final GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is unavailable in this JVM", e);
        }
    }

    /** A tag of {@code purpose} that only holders of the secret can compute: hex, {@code chars} long (at most 64). */
    public String tag(final String purpose, final int chars) {
        return HexFormat.of().formatHex(mac(purpose.getBytes(StandardCharsets.UTF_8))).substring(0, chars);
    }

    /** Compares in time independent of where the bytes differ. */
    public static boolean same(final byte[] a, final byte[] b) {
        return MessageDigest.isEqual(a, b);
    }

    public static byte[] nonce(final int bytes) {
        final byte[] n = new byte[bytes];
        RANDOM.nextBytes(n);
        return n;
    }

    public static byte[] utf8(final String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "ClusterSecret{hidden}";
    }
}
