package io.scythe.txn.spi;

import io.scythe.txn.AbortReason;
import io.scythe.txn.Protocol;
import io.scythe.txn.Stage;
import io.scythe.txn.UnknownKeyException;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;

/**
 * The one registry of protocol modules: every {@link ProtocolModule} on the class path, found with
 * {@link ServiceLoader} ({@code META-INF/services/io.scythe.txn.spi.ProtocolModule}, one line per module) in the
 * order the class path lists them, plus those a test {@linkplain #register registers}. Nodes, the embedded cluster,
 * the simulator, the benchmarks and the CLI find protocols, memory-node services, lock kinds and probes here.
 */
public final class ProtocolRegistry {
    private static final List<ProtocolModule> MODULES = new ArrayList<>();
    private static final Map<String, Protocol> PROTOCOLS = new LinkedHashMap<>();
    private static final Map<String, ProtocolModule> OWNERS = new LinkedHashMap<>();
    private static final Map<Integer, LockKind> LOCK_KINDS = new TreeMap<>();
    /**
     * Every module's probe, by module ({@link #MODULES}' order), asked per object at the end of a run: kept, not
     * asked of the modules each time.
     */
    private static final List<ObjectProbe> PROBES = new ArrayList<>();
    /** Every module's header words, by module, as formats list them. */
    private static final List<List<io.scythe.storage.ObjectFormat.Word>> MODULE_WORDS = new ArrayList<>();
    /** Each declared header word, with the module that declared it first. */
    private static final Map<HeaderWord, ProtocolModule> WORDS = new LinkedHashMap<>();
    /**
     * {@link #probesFor}'s answer by table format (equal formats, one entry: a run may build its formats anew), cleared
     * when a module is added. Asked per object of every table at the end of each simulated run ({@link #anyLockHeld}), building the
     * list each time was a fifth of a seed sweep's CPU (issue 23 §3: JFR of {@code scythe sim --explore 25 --workload
     * all --protocols rcc-occ}).
     */
    private static final Map<io.scythe.storage.ObjectFormat, List<ObjectProbe>> PROBES_BY_FORMAT =
        new java.util.HashMap<>();

    static {
        for (final ProtocolModule module : ServiceLoader.load(ProtocolModule.class,
            ProtocolRegistry.class.getClassLoader())) {
            add(module);
        }
    }

    private ProtocolRegistry() {
    }

    /**
     * Adds {@code module} (a test's, or one not on the class path's service list).
     *
     * @throws IllegalArgumentException when one of its protocol names or lock kind ids is taken by another module,
     *                                  or one of its header words overlaps another module's
     */
    public static synchronized void register(final ProtocolModule module) {
        add(module);
    }

    private static void add(final ProtocolModule module) {
        for (final Protocol p : module.protocols()) {
            if (PROTOCOLS.containsKey(p.name())) {
                throw new IllegalArgumentException("protocol '" + p.name() + "' of module " + module.name()
                    + " is registered already by module " + OWNERS.get(p.name()).name());
            }
        }
        for (final LockKind k : module.lockKinds()) {
            final LockKind known = LOCK_KINDS.get(k.id());
            if (known != null && known != k) {
                throw new IllegalArgumentException("lock kind " + k.id() + " (" + k.name() + ") of module "
                    + module.name() + " is taken by " + known.name());
            }
        }
        for (final HeaderWord w : module.headerWords()) {
            for (final Map.Entry<HeaderWord, ProtocolModule> e : WORDS.entrySet()) {
                if (!w.equals(e.getKey()) && w.overlaps(e.getKey())) {
                    throw new IllegalArgumentException("header word " + w + " of module " + module.name()
                        + " overlaps " + e.getKey() + " of module " + e.getValue().name());
                }
            }
        }
        module.stages(); // defines them (static fields of its package), so reports list them
        module.abortReasons();
        MODULES.add(module);
        for (final Protocol p : module.protocols()) {
            PROTOCOLS.put(p.name(), p);
            OWNERS.put(p.name(), module);
        }
        for (final LockKind k : module.lockKinds()) {
            LOCK_KINDS.put(k.id(), k);
        }
        for (final HeaderWord w : module.headerWords()) {
            WORDS.putIfAbsent(w, module);
        }
        PROBES.add(module.probe());
        MODULE_WORDS.add(module.headerWords().stream().map(HeaderWord::word).toList());
        PROBES_BY_FORMAT.clear();
        lastFormat = null;
    }

    /** Every header word a module declared, in registration order. */
    public static synchronized List<HeaderWord> headerWords() {
        return List.copyOf(WORDS.keySet());
    }

    /** Every module, in registration order. */
    public static synchronized List<ProtocolModule> modules() {
        return Collections.unmodifiableList(new ArrayList<>(MODULES));
    }

    /** The protocols of the default lists (modules that are {@link ProtocolModule#listed()}), in order. */
    public static synchronized List<Protocol> listed() {
        final List<Protocol> listed = new ArrayList<>();
        for (final Map.Entry<String, Protocol> e : PROTOCOLS.entrySet()) {
            if (OWNERS.get(e.getKey()).listed()) {
                listed.add(e.getValue());
            }
        }
        return listed;
    }

    /** The names of {@link #listed()}. */
    public static List<String> listedNames() {
        return listed().stream().map(Protocol::name).toList();
    }

    /** The names of the protocols only asked for by name (not {@link #listed()}). */
    public static synchronized List<String> unlistedNames() {
        final List<String> names = new ArrayList<>();
        for (final String name : PROTOCOLS.keySet()) {
            if (!OWNERS.get(name).listed()) {
                names.add(name);
            }
        }
        return names;
    }

    /**
     * The protocol {@code name}: a registered name, or one followed by {@code :} and options the protocol takes
     * ({@link Protocol#configured}, e.g. {@code rcc-nowait:primitive=rpc}).
     *
     * @throws UnknownKeyException      for a name no registered module has, naming those it has
     * @throws IllegalArgumentException for options the protocol does not take
     */
    public static synchronized Protocol protocol(final String name) {
        Protocol p = PROTOCOLS.get(name);
        final int colon = name.indexOf(':');
        if (p == null && colon > 0 && PROTOCOLS.containsKey(name.substring(0, colon))) {
            p = PROTOCOLS.get(name.substring(0, colon)).configured(name.substring(colon + 1));
        }
        if (p == null) {
            throw new UnknownKeyException("unknown protocol '" + name + "'; available: " + listedNames()
                + (unlistedNames().isEmpty() ? "" : " (and " + unlistedNames() + ", only by name)"));
        }
        return p;
    }

    /** The module that registered protocol {@code name}. */
    public static synchronized ProtocolModule moduleOf(final String name) {
        protocol(name); // the clear error for an unknown name
        final int colon = name.indexOf(':');
        return OWNERS.containsKey(name) || colon < 0 ? OWNERS.get(name) : OWNERS.get(name.substring(0, colon));
    }

    /**
     * The module of {@code protocol} (one of its {@link ProtocolModule#protocols}) when the compute nodes of a run of it
     * talk to each other ({@link ProtocolModule#peerMessaging} not NONE), else {@code null} (also for a protocol no
     * module has).
     */
    public static synchronized ProtocolModule peerModuleOf(final Protocol protocol) {
        for (final ProtocolModule m : MODULES) {
            // The protocol itself, or one of them configured by options (e.g. rcc-calvin:primitive=rpc).
            final boolean its = m.protocols().contains(protocol)
                || m.protocols().stream().anyMatch(p -> protocol.name().startsWith(p.name() + ":"));
            if (its && m.peerMessaging(protocol) != PeerMessaging.NONE) {
                return m;
            }
        }
        return null;
    }

    /**
     * The storage format of a table of {@code schema} in a run of {@code protocol}: its module's
     * ({@link ProtocolModule#objectFormat}), or {@link io.scythe.storage.ObjectFormat#FULL} for a protocol no module
     * registered (one only a test has).
     */
    public static io.scythe.storage.ObjectFormat objectFormat(final Protocol protocol,
                                                              final io.scythe.storage.TableSchema schema) {
        final ProtocolModule module;
        try {
            module = moduleOf(protocol.name());
        } catch (final UnknownKeyException onlyATest) {
            return io.scythe.storage.ObjectFormat.FULL;
        }
        return module.objectFormat(protocol, schema);
    }

    /** The lock kind of redo records with lock kind word {@code id}, or {@code null} when no module has it. */
    public static synchronized LockKind lockKind(final int id) {
        return LOCK_KINDS.get(id);
    }

    /** Every abort reason, the modules' included, in report order. */
    public static synchronized List<AbortReason> abortReasons() {
        return AbortReason.values();
    }

    /** Every stage, the modules' included, in report order. */
    public static synchronized List<Stage> stages() {
        return Stage.values();
    }

    /**
     * Whether any module's locks leave the object at {@code header} of {@code table} held (end-of-run check): the
     * probes of the modules whose words the table's format carries ({@code Table#format}; every module's on a
     * {@code FULL} table), and of those that keep no word in objects.
     */
    public static synchronized boolean anyLockHeld(final io.scythe.storage.Table table, final int header) {
        for (final ObjectProbe probe : probesFor(table)) {
            if (probe.locked(table, header)) {
                return true;
            }
        }
        return false;
    }

    /** Whether some module's probe finds a write left unsettled in the object ({@link ObjectProbe#unsettled}). */
    public static synchronized boolean anyUnsettled(final io.scythe.storage.Table table, final int header) {
        for (final ObjectProbe probe : probesFor(table)) {
            if (probe.unsettled(table, header)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The probes of the modules whose words {@code table}'s format carries ({@code Table#format}; every module's on a
     * {@code FULL} table), and of those that keep no word in objects, in registration order.
     */
    private static List<ObjectProbe> probesFor(final io.scythe.storage.Table table) {
        final io.scythe.storage.ObjectFormat format = table.format();
        if (format == lastFormat) { // a run's checks go table by table: most asks repeat the last format
            return lastProbes;
        }
        lastProbes = PROBES_BY_FORMAT.computeIfAbsent(format, f -> {
            final List<ObjectProbe> probes = new ArrayList<>();
            for (int m = 0; m < MODULES.size(); m++) {
                if (probed(f, MODULE_WORDS.get(m))) {
                    probes.add(PROBES.get(m));
                }
            }
            return List.copyOf(probes);
        });
        lastFormat = format;
        return lastProbes;
    }

    /** The format {@link #probesFor} answered last, and its probes (equal formats compare slowly: a record of lists). */
    private static io.scythe.storage.ObjectFormat lastFormat;
    private static List<ObjectProbe> lastProbes;

    /**
     * The committed value of the object at {@code object} (key {@code key}) of {@code table} as the module keeping it
     * in a format of its own answers ({@link ObjectProbe#committedValue(io.scythe.storage.Table, int, long)}), asking
     * only the modules whose words the table's format carries, as {@link #anyLockHeld} does; or
     * {@link ObjectProbe#NOT_MINE}.
     */
    static synchronized org.agrona.concurrent.AtomicBuffer committedValueElsewhere(
        final io.scythe.storage.Table table, final int object, final long key) {
        for (final ObjectProbe probe : probesFor(table)) {
            final org.agrona.concurrent.AtomicBuffer value = probe.committedValue(table, object, key);
            if (value != ObjectProbe.NOT_MINE) {
                return value;
            }
        }
        return ObjectProbe.NOT_MINE;
    }

    private static boolean probed(final io.scythe.storage.ObjectFormat format,
                                  final List<io.scythe.storage.ObjectFormat.Word> words) {
        if (words.isEmpty() || format == io.scythe.storage.ObjectFormat.FULL) {
            return true;
        }
        for (final io.scythe.storage.ObjectFormat.Word w : words) {
            if (format.carries(w)) {
                return true;
            }
        }
        return false;
    }
}
