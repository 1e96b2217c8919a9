package io.scythe.txn.rcc;

/**
 * Which primitive each stage of an RCC protocol uses (RCC §5.1: a hybrid is a code with one bit per stage). The
 * stages, in the order of the code's digits: Read, Lock, Validate (or SUNDIAL's Renew), Log, Commit, Release; a
 * digit {@code 1} is one-sided (READ, WRITE, CAS), {@code 0} is RPC (a handler on the memory node). {@code 111111} is
 * RCC's one-sided form, {@code 000000} its RPC form.
 *
 * <p>Options ({@code rcc-<protocol>:<options>}): {@code primitive=onesided} (the default), {@code primitive=rpc}, or
 * {@code hybrid=<6 digits>}. {@code hybrid=auto} is not a form but the enumerator: every code of the stages the
 * protocol has ({@link RccProtocol#variants}), which {@code scythe sim} runs one after the other and ranks.
 * {@code +doorbell=off} after a form posts a one-sided lock's CAS and its READ one after the other (two waits) instead
 * of in one doorbell (one wait), to measure what RCC's overlap of them gives (§4.2: +25.1 % on low-contention
 * SmallBank).
 */
public record RccForm(int code, boolean doorbell) {
    /** The stages, by their digit's position in the code (first digit = Read). */
    public enum Step { READ, LOCK, VALIDATE, LOG, COMMIT, RELEASE }

    public static final int STAGES = Step.values().length;
    public static final RccForm ONE_SIDED = new RccForm((1 << STAGES) - 1);
    public static final RccForm RPC = new RccForm(0);

    /** The form of {@code code}, with the one-sided lock's CAS and READ in one doorbell. */
    public RccForm(final int code) {
        this(code, true);
    }

    public RccForm {
        if (code < 0 || code >= 1 << STAGES) {
            throw new IllegalArgumentException("hybrid code " + code + " has more than " + STAGES + " bits");
        }
    }

    /**
     * Every form that differs in {@code steps} only (each of them RPC or one-sided, every other step one-sided, as its
     * digit changes nothing), the RPC and the one-sided form included: what the enumerator runs.
     */
    public static java.util.List<RccForm> codesOver(final java.util.Set<Step> steps) {
        final java.util.List<Step> varied = new java.util.ArrayList<>(steps);
        final java.util.List<RccForm> codes = new java.util.ArrayList<>();
        for (int mask = 0; mask < 1 << varied.size(); mask++) {
            int code = ONE_SIDED.code;
            for (int i = 0; i < varied.size(); i++) {
                if ((mask & 1 << i) == 0) {
                    code &= ~bit(varied.get(i));
                }
            }
            codes.add(mask == 0 ? RPC : new RccForm(code)); // none of its steps one-sided: the RPC form
        }
        return codes;
    }

    /** Whether {@code step} is one-sided in this form. */
    public boolean oneSided(final Step step) {
        return (code & bit(step)) != 0;
    }

    private static int bit(final Step step) {
        return 1 << (STAGES - 1 - step.ordinal());
    }

    /** The code as its digits, Read first (e.g. {@code 010111}). */
    public String digits() {
        final StringBuilder s = new StringBuilder(STAGES);
        for (final Step step : Step.values()) {
            s.append(oneSided(step) ? '1' : '0');
        }
        return s.toString();
    }

    /** What {@code --protocols} says after the protocol's name and {@code :}. */
    public String option() {
        return (code == ONE_SIDED.code ? "primitive=onesided" : code == 0 ? "primitive=rpc" : "hybrid=" + digits())
            + (doorbell ? "" : "+doorbell=off");
    }

    /**
     * Parses one option ({@code primitive=onesided|rpc} or {@code hybrid=<6 digits of 0 and 1>}).
     *
     * @throws IllegalArgumentException for anything else, saying what is accepted
     */
    public static RccForm parse(final String options) {
        final String[] parts = options.split("\\+");
        final RccForm form = parseOne(parts[0]);
        if (parts.length == 1) {
            return form;
        }
        if (parts.length == 2 && parts[1].trim().equals("doorbell=off")) {
            return new RccForm(form.code, false);
        }
        throw new IllegalArgumentException("RCC options '" + options + "': expected a form, optionally followed by "
            + "'+doorbell=off' (not a comma: --protocols splits on commas)");
    }

    private static RccForm parseOne(final String option) {
        final String o = option.trim();
        switch (o) {
            case "primitive=onesided", "primitive=one-sided" -> {
                return ONE_SIDED;
            }
            case "primitive=rpc" -> {
                return RPC;
            }
            case "hybrid=auto", "primitive=hybrid" -> throw new IllegalArgumentException("'" + o + "' is not one "
                + "form: hybrid=auto names every code of a protocol, which 'scythe sim --protocols' runs and ranks "
                + "(RccProtocol#variants); give a code for one form, hybrid=<" + STAGES + " digits, 1 one-sided, "
                + "0 RPC, for Read Lock Validate Log Commit Release>");
            default -> {
            }
        }
        if (o.startsWith("hybrid=")) {
            final String digits = o.substring("hybrid=".length());
            if (digits.length() == STAGES && digits.chars().allMatch(c -> c == '0' || c == '1')) {
                return new RccForm(Integer.parseInt(digits, 2));
            }
        }
        throw new IllegalArgumentException("RCC option '" + o + "': expected primitive=onesided, primitive=rpc or "
            + "hybrid=<" + STAGES + " digits of 0 (RPC) and 1 (one-sided), for Read Lock Validate Log Commit Release>");
    }
}
