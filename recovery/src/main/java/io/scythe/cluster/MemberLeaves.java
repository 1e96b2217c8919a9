package io.scythe.cluster;

import com.hazelcast.cluster.MembershipEvent;
import com.hazelcast.cluster.MembershipListener;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * What a node that fences compute nodes (an MN, the TSO) does when Hazelcast tells it a member left: it acts on the
 * departure ({@code leave}: fences the member's CN and owes its recovery) only while its view holds a majority of the
 * registered nodes ({@link ShardOwnership#isMajority}); a member cut off in a minority sees live nodes leave and must not
 * revoke them. Issue 23: such a departure used to be dropped, so a node that was cut off (or merely lost one more member
 * for a moment) just when a paused CN was removed never fenced it, its {@code /health} never listed it, and on the
 * TSO nothing else fences. Now it is remembered and acted on once this node's view holds a majority again
 * ({@link #retry}: on a member joining, on a registry entry changing, after a merge), unless the member is then back in
 * the view (it was live on the other side of a split, not gone). A remembered member absent from a majority view is
 * gone as surely as one removed from it, so acting on it then is the same verdict the majority side already took
 * (a CN cut off with this node that merges back loses its lease and rejoins under a new epoch anyway).
 */
final class MemberLeaves implements MembershipListener {
    private final Supplier<Collection<UUID>> registered;
    private final Supplier<Set<UUID>> view;
    private final Consumer<String> log;
    private final Consumer<UUID> leave;
    /** Members seen leaving while this node's view held no majority: not acted on yet. */
    private final Set<UUID> skipped = new HashSet<>();

    /**
     * @param registered every registered node's member, as this node last saw the registry (the quorum's denominator)
     * @param view       the members in this node's view now (a local read)
     * @param log        a line on the node's log
     * @param leave      what to do about a member that left: fence its CN, owe its recovery (does not block)
     */
    MemberLeaves(final Supplier<Collection<UUID>> registered, final Supplier<Set<UUID>> view,
                 final Consumer<String> log, final Consumer<UUID> leave) {
        this.registered = registered;
        this.view = view;
        this.log = log;
        this.leave = leave;
    }

    @Override
    public void memberAdded(final MembershipEvent event) {
        retry();
    }

    @Override
    public void memberRemoved(final MembershipEvent event) {
        final UUID gone = event.getMember().getUuid();
        if (judge(gone)) {
            leave.accept(gone);
        }
        retry();
    }

    /**
     * Whether this node may act on member {@code gone} leaving now (its view, without {@code gone}, holds a majority);
     * if not, the departure is remembered (and logged) and {@link #retry} acts on it once the view holds one again.
     */
    boolean judge(final UUID gone) {
        synchronized (this) {
            final Set<UUID> live = live(gone);
            final Collection<UUID> nodes = registered.get();
            if (ShardOwnership.isMajority(nodes, live)) {
                return true;
            }
            skipped.add(gone);
            final long seen = nodes.stream().filter(live::contains).count();
            log.accept("sees " + seen + " of " + nodes.size() + " registered nodes (cut off in a minority?): fences "
                + "no CN on a member leaving until it sees a majority again (" + skipped.size() + " remembered)");
            return false;
        }
    }

    /** Acts on the departures remembered while this view held no majority, if it holds one now. */
    void retry() {
        final List<UUID> due = new ArrayList<>();
        synchronized (this) {
            if (skipped.isEmpty()) {
                return;
            }
            final Set<UUID> live = live(null);
            if (!ShardOwnership.isMajority(registered.get(), live)) {
                return; // still cut off: logged when the departure was skipped
            }
            for (final UUID gone : skipped) {
                if (!live.contains(gone)) {
                    due.add(gone);
                }
            }
            if (skipped.size() > due.size()) {
                log.accept("sees a majority again; " + (skipped.size() - due.size()) + " member(s) seen leaving "
                    + "while cut off are in its view again (live on the other side): not fenced");
            }
            skipped.clear();
        }
        for (final UUID gone : due) {
            log.accept("sees a majority again: acts on member " + gone + ", seen leaving while it was cut off");
            leave.accept(gone);
        }
    }

    /** Members seen leaving and not acted on yet (for tests and health). */
    synchronized Set<UUID> skipped() {
        return Set.copyOf(skipped);
    }

    private Set<UUID> live(final UUID gone) {
        final Set<UUID> live = new HashSet<>(view.get());
        if (gone != null) {
            live.remove(gone);
        }
        return live;
    }
}
