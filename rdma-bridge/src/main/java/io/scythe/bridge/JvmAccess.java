package io.scythe.bridge;

/**
 * What the JVM must allow for Scythe to run. Agrona 2 (every buffer of the fabric, the tables and the transactions)
 * reaches {@code jdk.internal.misc.Unsafe} directly, which Java 17 only exports when told to; without it the first
 * buffer fails with an {@code IllegalAccessError} deep inside Agrona. No Agrona setting avoids it (Agrona 2 dropped
 * {@code sun.misc.Unsafe}), so Scythe checks it before it starts anything and names the flag. The project's own jar
 * ({@code scythe.jar}) carries it in its manifest ({@code Add-Exports}); an application embedding Scythe gives it on
 * its {@code java} command line (or in its own jar's manifest, or in {@code JDK_JAVA_OPTIONS}).
 */
public final class JvmAccess {
    /** The JVM option Agrona needs. */
    public static final String AGRONA_FLAG = "--add-exports java.base/jdk.internal.misc=ALL-UNNAMED";

    private JvmAccess() {
    }

    /** Whether {@code jdk.internal.misc} is exported to Agrona's module (the unnamed one on a class path). */
    public static boolean agronaAccessible() {
        return Object.class.getModule().isExported("jdk.internal.misc", org.agrona.DirectBuffer.class.getModule());
    }

    /**
     * @throws IllegalStateException naming {@link #AGRONA_FLAG} when this JVM does not export what Agrona needs
     */
    public static void requireAgronaAccess() {
        if (!agronaAccessible()) {
            throw new IllegalStateException("Scythe needs the JVM option " + AGRONA_FLAG + " (Agrona, which holds"
                + " its buffers, uses jdk.internal.misc.Unsafe); start java with it, e.g. java " + AGRONA_FLAG
                + " -cp ... YourMain, or put 'Add-Exports: java.base/jdk.internal.misc' in your jar's manifest");
        }
    }
}
