package io.scythe.cluster;

import com.hazelcast.cluster.Cluster;
import com.hazelcast.cluster.Member;
import com.hazelcast.cluster.MembershipEvent;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 23: a node (mn0, the TSO) whose view lacks a majority when a paused CN's member is removed skips that fence;
 * once its view holds a majority again it must fence the CN after all, never a member that was live on the other side.
 * Drives {@link MemberLeaves} (the listener {@code ScytheNode} registers) with Hazelcast membership events.
 */
final class MemberLeavesTest {
    private final UUID mn0 = UUID.randomUUID();
    private final UUID tso = UUID.randomUUID();
    private final UUID cn0 = UUID.randomUUID();
    private final UUID cn1 = UUID.randomUUID();
    /** The registry as this node saw it: node name to member. */
    private final Map<String, UUID> registered = new LinkedHashMap<>(Map.of("mn0", mn0, "tso", tso, "cn0", cn0,
        "cn1", cn1));
    /** This node's (the TSO's) view. */
    private final Set<UUID> view = new HashSet<>(Set.of(mn0, tso, cn0, cn1));
    private final List<UUID> left = new ArrayList<>();
    private final List<String> log = new ArrayList<>();
    private final MemberLeaves leaves = new MemberLeaves(registered::values, () -> Set.copyOf(view), log::add,
        left::add);

    @Test
    void shouldActOnAMemberLeavingAMajorityViewAtOnce() {
        leaves.memberRemoved(removed(cn1));

        assertEquals(List.of(cn1), left);
        assertEquals(Set.of(), leaves.skipped());
    }

    @Test
    void shouldFenceAMemberSeenLeavingFromAMinorityOnceTheViewHoldsAMajorityAgain() {
        view.remove(mn0); // a moment's split: the TSO lost mn0 just before the paused cn1 is removed
        leaves.memberRemoved(removed(mn0));
        assertEquals(List.of(mn0), left, "3 of 4 still: mn0's departure is acted on (it owes no CN)");
        left.clear();
        view.remove(cn1);
        leaves.memberRemoved(removed(cn1));
        assertEquals(List.of(), left, "2 of 4 is no majority: nothing fenced yet");
        assertEquals(Set.of(cn1), leaves.skipped());
        assertTrue(log.stream().anyMatch(l -> l.startsWith("sees 2 of 4 registered nodes")), log.toString());

        // mn0 merges back under a new member and registers it: first the member joins (the registry still names the
        // old one: no majority yet), then its entry changes (ScytheNode#noteCn retries).
        final UUID mn0Again = UUID.randomUUID();
        view.add(mn0Again);
        leaves.memberAdded(added(mn0Again));
        assertEquals(List.of(), left);
        registered.put("mn0", mn0Again);
        leaves.retry();

        assertEquals(List.of(cn1), left, "gone from a majority view: fenced now");
        assertEquals(Set.of(), leaves.skipped());
        leaves.retry();
        leaves.memberAdded(added(UUID.randomUUID()));
        assertEquals(List.of(cn1), left, "fenced once");
    }

    @Test
    void shouldNotFenceAMemberSeenLeavingFromAMinorityThatIsLiveOnTheOtherSide() {
        // This node is cut off alone: it saw the other members leave one by one, although they run on. The first
        // departure still left it 3 of 4 (acted on: Hazelcast removes members one at a time), the others are skipped.
        for (final UUID m : List.of(mn0, cn0, cn1)) {
            view.remove(m);
            leaves.memberRemoved(removed(m));
        }
        assertEquals(List.of(mn0), left);
        assertEquals(Set.of(cn0, cn1), leaves.skipped());

        // It merges back (under a new member) into the majority, whose members kept theirs.
        final UUID tsoAgain = UUID.randomUUID();
        view.clear();
        view.addAll(Set.of(mn0, tsoAgain, cn0, cn1));
        registered.put("tso", tsoAgain);
        leaves.memberAdded(added(mn0));

        assertEquals(List.of(mn0), left, "the CNs it saw leave while cut off are live: not fenced");
        assertEquals(Set.of(), leaves.skipped());
    }

    @Test
    void shouldJudgeARegisteredMemberNotInTheViewLikeOneLeaving() {
        view.remove(mn0);
        view.remove(cn0);
        view.remove(cn1);

        assertEquals(false, leaves.judge(cn1), "cut off: a CN entry naming a member not in view is not fenced yet");
        view.add(mn0);
        view.add(cn0);
        leaves.memberAdded(added(cn0));

        assertEquals(List.of(cn1), left);
    }

    private static MembershipEvent removed(final UUID member) {
        return new MembershipEvent(cluster(), member(member), MembershipEvent.MEMBER_REMOVED, Set.of());
    }

    private static MembershipEvent added(final UUID member) {
        return new MembershipEvent(cluster(), member(member), MembershipEvent.MEMBER_ADDED, Set.of());
    }

    private static Member member(final UUID uuid) {
        return (Member) Proxy.newProxyInstance(Member.class.getClassLoader(), new Class<?>[] {Member.class},
            (proxy, method, args) -> switch (method.getName()) {
                case "getUuid" -> uuid;
                case "toString" -> "Member " + uuid;
                case "hashCode" -> uuid.hashCode();
                case "equals" -> proxy == args[0];
                default -> throw new UnsupportedOperationException(method.getName());
            });
    }

    private static Cluster cluster() {
        return (Cluster) Proxy.newProxyInstance(Cluster.class.getClassLoader(), new Class<?>[] {Cluster.class},
            (proxy, method, args) -> switch (method.getName()) {
                case "toString" -> "test cluster";
                case "hashCode" -> 0;
                case "equals" -> proxy == args[0];
                default -> throw new UnsupportedOperationException(method.getName());
            });
    }
}
