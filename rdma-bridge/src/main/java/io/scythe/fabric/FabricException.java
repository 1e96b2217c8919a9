package io.scythe.fabric;

/**
 * A misuse of the fabric or a configuration it cannot satisfy (unknown node, region too large, provider not
 * available). Failures of individual verbs are never exceptions: they are completions with a {@link WcStatus}.
 */
public class FabricException extends RuntimeException {
    public FabricException(final String message) {
        super(message);
    }

    public FabricException(final String message, final Throwable cause) {
        super(message, cause);
    }
}
