package io.scythe.bench.workload;

import io.scythe.storage.LogDb;
import io.vertx.core.json.JsonObject;

import java.util.List;
import java.util.SplittableRandom;

/** SmallBank as the OLTP driver runs it: {@link SmallBank}'s mix over Zipf-chosen customers; money is conserved. */
public final class SmallBankSpec implements OltpSpec {
    private final long accounts;
    private final double theta;
    private final String mixName;
    private final List<SmallBank.Type> mix;
    private final Zipf zipf;

    public SmallBankSpec(final long accounts, final double theta, final String mix) {
        if (accounts < 2 || accounts > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("accounts=" + accounts + " must be within [2, 2^31)");
        }
        this.accounts = accounts;
        this.theta = theta;
        this.mixName = mix;
        this.mix = SmallBank.mix(mix);
        this.zipf = new Zipf((int) accounts, theta);
    }

    @Override
    public String name() {
        return "smallbank";
    }

    @Override
    public String quantity() {
        return "money";
    }

    @Override
    public JsonObject params() {
        return new JsonObject().put("accounts", accounts).put("theta", theta).put("mix", mixName);
    }

    @Override
    public void load(final LogDb db, final int part, final int parts) {
        SmallBank.load(db, accounts, part, parts);
    }

    @Override
    public Drawn draw(final SplittableRandom random) {
        final SmallBank.Type type = SmallBank.pick(mix, random);
        final long[] args = SmallBank.drawArgs(zipf, random);
        return new Drawn(type.name(), SmallBank.body(type, args), args[0], SmallBank.readOnly(type));
    }

    @Override
    public long total(final List<LogDb> dbs) {
        long sum = 0;
        for (int p = 0; p < dbs.size(); p++) {
            sum += SmallBank.totalOf(dbs.get(p), accounts, p, dbs.size());
        }
        return sum;
    }
}
