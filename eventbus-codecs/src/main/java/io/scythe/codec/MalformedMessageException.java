package io.scythe.codec;

import io.vertx.core.VertxException;

/** Bytes on the event bus that are not a valid message of the expected type. */
public final class MalformedMessageException extends VertxException {
    public MalformedMessageException(final String message) {
        super(message, true);
    }

    public MalformedMessageException(final String message, final Throwable cause) {
        super(message, cause, true);
    }
}
