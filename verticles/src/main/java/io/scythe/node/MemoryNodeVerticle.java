package io.scythe.node;

import io.scythe.codec.KryoCodec;
import io.scythe.fabric.Fabric;
import io.scythe.fabric.FabricOptions;
import io.scythe.fabric.MemoryKind;
import io.scythe.fabric.MemoryRegion;
import io.scythe.fabric.Nic;
import io.scythe.fabric.RemoteRegion;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The memory-node role: attaches the node to the fabric, registers its regions, and answers where they are (base
 * address, length, rkey) over the event bus at {@link #metadataAddress(String)} — control traffic, looked up once and
 * cached by compute nodes; data then moves by one-sided verbs.
 *
 * <p>Config: {@code {"node": "mn0", "regions": [{"name": "data", "bytes": 1048576, "kind": "HOST"}]}}.
 */
public final class MemoryNodeVerticle extends VerticleBase {
    /** Error code of a lookup for a region this node does not have. */
    public static final int UNKNOWN_REGION = 404;
    /** Error code of a malformed lookup. */
    public static final int BAD_REQUEST = 400;

    private static final Set<String> KEYS = Set.of("node", "regions");
    private static final Set<String> REGION_KEYS = Set.of("name", "bytes", "kind");

    private final Fabric fabric;
    private final Map<String, MemoryRegion> regions = new LinkedHashMap<>();
    private Nic nic;
    private boolean attachedHere;
    private MessageConsumer<Object> consumer;

    public MemoryNodeVerticle(final Fabric fabric) {
        this.fabric = fabric;
    }

    /** Event-bus address of {@code node}'s region directory. */
    public static String metadataAddress(final String node) {
        return "scythe.mn." + node + ".regions";
    }

    /** Registers the message types this verticle exchanges on {@code vertx}'s event bus. */
    public static void registerCodecs(final io.vertx.core.eventbus.EventBus eventBus) {
        KryoCodec.registerNested(RemoteRegion.class, MemoryKind.class);
        KryoCodec.register(eventBus, RegionLookup.class, RegionDirectory.class);
    }

    @Override
    public Future<?> start() {
        final JsonObject config = config();
        final List<RegionSpec> specs;
        final String node;
        try {
            node = parse(config, specs = new ArrayList<>());
        } catch (final IllegalArgumentException e) {
            return Future.failedFuture(new IllegalArgumentException("memory node config: " + e.getMessage(), e));
        }
        registerCodecs(vertx.eventBus());
        final Nic existing = fabric.nic(node);
        final Future<Nic> attached = existing != null ? Future.succeededFuture(existing) : fabric.attach(node);
        attachedHere = existing == null;
        return attached
            // Registering zeroes the memory (up to gigabytes): keep it off the event loop.
            .compose(n -> vertx.executeBlocking(() -> {
                nic = n;
                for (final RegionSpec spec : specs) {
                    regions.put(spec.name(), n.register(spec.name(), spec.bytes(), spec.kind()));
                }
                return n;
            }))
            .compose(n -> {
                consumer = vertx.eventBus().consumer(metadataAddress(node), this::answer);
                return consumer.completion();
            });
    }

    private static String parse(final JsonObject config, final List<RegionSpec> into) {
        final Set<String> unknown = new TreeSet<>(config.fieldNames());
        unknown.removeAll(KEYS);
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("unknown keys " + unknown + "; known: " + new TreeSet<>(KEYS));
        }
        final String node = FabricOptions.checkName("node", config.getString("node"));
        final Set<String> names = new TreeSet<>();
        for (final Object o : config.getJsonArray("regions", new JsonArray())) {
            if (!(o instanceof JsonObject)) {
                throw new IllegalArgumentException("each region must be an object, not " + o);
            }
            final JsonObject r = (JsonObject) o;
            final Set<String> bad = new TreeSet<>(r.fieldNames());
            bad.removeAll(REGION_KEYS);
            if (!bad.isEmpty()) {
                throw new IllegalArgumentException("unknown region keys " + bad + "; known: "
                    + new TreeSet<>(REGION_KEYS));
            }
            final String name = FabricOptions.checkName("region", r.getString("name"));
            if (!names.add(name)) {
                throw new IllegalArgumentException("region " + name + " is listed twice");
            }
            final Long bytes = r.getLong("bytes");
            if (bytes == null || bytes <= 0) {
                throw new IllegalArgumentException("region " + name + ": bytes=" + bytes + " must be positive");
            }
            final MemoryKind kind;
            try {
                kind = MemoryKind.valueOf(r.getString("kind", "HOST").toUpperCase(Locale.ROOT));
            } catch (final IllegalArgumentException e) {
                throw new IllegalArgumentException("region " + name + ": kind must be HOST or DEVICE");
            }
            into.add(new RegionSpec(name, bytes, kind));
        }
        return node;
    }

    private void answer(final Message<Object> message) {
        if (!(message.body() instanceof RegionLookup)) {
            message.fail(BAD_REQUEST, "expected a RegionLookup, got "
                + (message.body() == null ? "null" : message.body().getClass().getSimpleName()));
            return;
        }
        final String wanted = ((RegionLookup) message.body()).region();
        final List<RemoteRegion> found = new ArrayList<>();
        if (RegionLookup.ALL.equals(wanted)) {
            for (final MemoryRegion r : nic.regions()) {
                found.add(r.describe());
            }
        } else {
            final MemoryRegion r = nic.region(wanted);
            if (r == null) {
                message.fail(UNKNOWN_REGION, "unknown region '" + wanted + "' on memory node " + nic.node()
                    + "; it has " + new TreeSet<>(regions.keySet()));
                return;
            }
            found.add(r.describe());
        }
        message.reply(new RegionDirectory(nic.node(), List.copyOf(found)));
    }

    @Override
    public Future<?> stop() {
        final Future<Void> unregistered = consumer == null ? Future.succeededFuture() : consumer.unregister();
        return unregistered.compose(v -> vertx.executeBlocking(() -> {
            if (nic != null) {
                for (final MemoryRegion r : regions.values()) {
                    if (r.isRegistered()) {
                        nic.deregister(r);
                    }
                }
                if (attachedHere) {
                    nic.close();
                }
            }
            return null;
        }));
    }

    /** The regions this verticle registered, by name. */
    public Map<String, MemoryRegion> regions() {
        return regions;
    }

    private record RegionSpec(String name, long bytes, MemoryKind kind) {
    }
}
