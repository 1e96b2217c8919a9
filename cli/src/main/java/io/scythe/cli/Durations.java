package io.scythe.cli;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses durations written as people write them: {@code 25us}, {@code 500ms}, {@code 2s}, {@code 1.5m}, {@code 1h}. */
final class Durations {
    private static final Pattern FORM = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(us|ms|s|m|h)?");

    private Durations() {
    }

    static Duration parse(final String text) {
        final Matcher m = FORM.matcher(text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + text + "' is not a duration; write e.g. 25us, 500ms, 10s, 2m or 1h");
        }
        final double value = Double.parseDouble(m.group(1));
        final String unit = m.group(2) == null ? "s" : m.group(2);
        final double millis;
        switch (unit) {
            case "us":
                return Duration.ofNanos(Math.round(value * 1000));
            case "ms":
                millis = value;
                break;
            case "m":
                millis = value * 60_000;
                break;
            case "h":
                millis = value * 3_600_000;
                break;
            default:
                millis = value * 1000;
        }
        return Duration.ofMillis(Math.round(millis));
    }
}
