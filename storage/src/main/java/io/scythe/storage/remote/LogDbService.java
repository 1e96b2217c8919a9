package io.scythe.storage.remote;

import io.scythe.rrpc.RpcRequest;
import io.scythe.rrpc.RpcResponder;
import io.scythe.rrpc.RpcServer;
import io.scythe.storage.LogDb;
import io.scythe.storage.Table;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/** LogDB's RPCs on a memory node's CPU: index lookups and timestamped reads ({@link LogDbRpc}). */
public final class LogDbService {
    private final LogDb db;
    private final UnsafeBuffer scratch = new UnsafeBuffer(new byte[1 << 16]);

    public LogDbService(final LogDb db) {
        this.db = db;
    }

    /** Told of every insert created locked, with the compute node that asked (recovery abandons a dead one's). */
    @FunctionalInterface
    public interface InsertObserver {
        void lockedInsert(String client, Table table, long key, long pointer, Table.InsertLock lock, long lockWord,
                          long ticket);
    }

    private InsertObserver insertObserver;

    /**
     * Reports every locked insert to {@code observer} (on the server's loop), and to every observer added before it
     * (first): recovery's and a test's may both watch.
     */
    public LogDbService observeInserts(final InsertObserver observer) {
        final InsertObserver before = insertObserver;
        this.insertObserver = before == null ? observer : (client, table, key, pointer, lock, word, ticket) -> {
            before.lockedInsert(client, table, key, pointer, lock, word, ticket);
            observer.lockedInsert(client, table, key, pointer, lock, word, ticket);
        };
        return this;
    }

    /** Serves LogDB's RPCs on {@code server} (which runs on one event loop, so the scratch buffer is safe). */
    public LogDbService register(final RpcServer server) {
        server.handle(LogDbRpc.LOOKUP, this::lookup);
        server.handle(LogDbRpc.READ, this::read);
        server.handle(LogDbRpc.LOOKUP_READ, this::lookupRead);
        server.handle(LogDbRpc.INSERT, this::insert);
        server.handle(LogDbRpc.ABANDON, this::abandon);
        server.handle(LogDbRpc.LOCATE, this::locate);
        server.handle(LogDbRpc.KEYS, this::keys);
        server.handle(LogDbRpc.GRANT, this::grant);
        server.handle(LogDbRpc.RECLAIM, this::reclaim);
        return this;
    }

    private Table table(final RpcRequest request, final RpcResponder responder, final int length) {
        return table(request, responder, length, length);
    }

    private Table table(final RpcRequest request, final RpcResponder responder, final int min, final int max) {
        if (request.payloadLength() < min || request.payloadLength() > max) {
            responder.fail(LogDbRpc.BAD_REQUEST, "LogDB RPC " + request.rpcId() + " takes "
                + (min == max ? "" : "at least ") + min + " bytes, got "
                + request.payloadLength());
            return null;
        }
        final int id = request.payload().getInt(request.payloadOffset());
        final Table table = db.table(id);
        if (table == null) {
            responder.fail(LogDbRpc.UNKNOWN_TABLE, "no table " + id + " on memory node " + db.nic().node());
        }
        return table;
    }

    private void lookup(final RpcRequest request, final RpcResponder responder) {
        final Table table = table(request, responder, 16);
        if (table != null) {
            final long pointer = table.lookup(request.payload().getLong(request.payloadOffset() + 8));
            scratch.putLong(0, pointer);
            scratch.putLong(8, pointer == 0 ? table.absentBound() : 0); // read after the miss (Table#absentBound)
            responder.reply(scratch, 0, LogDbRpc.LOOKUP_REPLY_BYTES);
        }
    }

    private void read(final RpcRequest request, final RpcResponder responder) {
        final Table table = table(request, responder, 24);
        if (table == null) {
            return;
        }
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final int length = table.readAt(p.getLong(at + 8), p.getLong(at + 16), scratch, 0);
        answer(responder, length, 0);
    }

    private void lookupRead(final RpcRequest request, final RpcResponder responder) {
        final Table table = table(request, responder, 24);
        if (table == null) {
            return;
        }
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final long pointer = table.lookup(p.getLong(at + 8));
        if (pointer == 0) {
            responder.fail(LogDbRpc.NOT_FOUND, "no key " + p.getLong(at + 8) + " in table " + table.schema().name());
            return;
        }
        scratch.putLong(0, pointer);
        answer(responder, table.readAt(pointer, p.getLong(at + 16), scratch, 8), 8);
    }

    private static Table.InsertLock lockOf(final int mode) {
        return mode == 0 ? Table.InsertLock.CAS_WORD : mode == 1 ? Table.InsertLock.TICKET
            : mode == 2 ? Table.InsertLock.NONE : null;
    }

    private void insert(final RpcRequest request, final RpcResponder responder) {
        final Table table = table(request, responder, LogDbRpc.INSERT_HEADER_BYTES, Integer.MAX_VALUE);
        if (table == null) {
            return;
        }
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final Table.InsertLock lock = lockOf(p.getInt(at + 4));
        final long key = p.getLong(at + 8);
        final long lockWord = p.getLong(at + 16);
        final int length = p.getInt(at + 24);
        if (lock == null || length < 0 || length != request.payloadLength() - LogDbRpc.INSERT_HEADER_BYTES
            || (lock == Table.InsertLock.CAS_WORD && lockWord == 0)) {
            responder.fail(LogDbRpc.BAD_REQUEST, "malformed INSERT into table " + table.schema().name());
            return;
        }
        final long pointer = table.insertLocked(key, p, at + LogDbRpc.INSERT_HEADER_BYTES, length, lock, lockWord);
        if (pointer == Table.DUPLICATE) {
            responder.fail(LogDbRpc.DUPLICATE, "key " + key + " exists in table " + table.schema().name());
        } else if (pointer == Table.LOCKED) {
            responder.fail(LogDbRpc.LOCKED, "key " + key + " of table " + table.schema().name()
                + " is locked by another transaction");
        } else if (pointer == Table.BAD_LENGTH) {
            responder.fail(LogDbRpc.BAD_REQUEST, "value of " + length + " bytes for table " + table.schema().name()
                + " (max " + table.schema().maxValueBytes() + (table.schema().fixedSize() ? ", fixed)" : ")"));
        } else if (pointer < 0) {
            responder.fail(LogDbRpc.FULL, "table " + table.schema().name() + " on memory node " + db.nic().node()
                + " is full (" + table.size() + " keys, capacity " + table.schema().capacity() + ")");
        } else {
            final long ticket = lock == Table.InsertLock.TICKET ? table.insertTicket(pointer) : 0;
            if (insertObserver != null && lock != Table.InsertLock.NONE) { // nothing held: nothing to abandon
                insertObserver.lockedInsert(request.client(), table, key, pointer, lock, lockWord, ticket);
            }
            scratch.putLong(0, pointer);
            scratch.putLong(8, table.objectMemory().getLongVolatile(table.offsetOf(pointer)
                + io.scythe.storage.ObjectLayout.VERSION_OFFSET));
            scratch.putLong(16, ticket);
            responder.reply(scratch, 0, LogDbRpc.INSERT_REPLY_BYTES);
        }
    }

    private void locate(final RpcRequest request, final RpcResponder responder) {
        final Table table = table(request, responder, 16);
        if (table == null) {
            return;
        }
        // A copy loaded as a primary is located too: after its node rejoined it serves as a backup
        // (MemoryNodeConfiguration#rejoin), while the promoted copy is the primary.
        final long key = request.payload().getLong(request.payloadOffset() + 8);
        final long pointer = table.locateBackupObject(key);
        if (pointer < 0) {
            responder.fail(LogDbRpc.FULL, "backup table " + table.schema().name() + " on memory node "
                + db.nic().node() + " is full (capacity " + table.schema().capacity() + ")");
            return;
        }
        scratch.putLong(0, pointer);
        responder.reply(scratch, 0, 8);
    }

    private void grant(final RpcRequest request, final RpcResponder responder) {
        final Table table = table(request, responder, 8, 16);
        if (table == null) {
            return;
        }
        if (request.payloadLength() != 8 && request.payloadLength() != 16) {
            responder.fail(LogDbRpc.BAD_REQUEST, "GRANT takes 8 or 16 bytes, got " + request.payloadLength());
            return;
        }
        final int count = request.payload().getInt(request.payloadOffset() + 4);
        final long holder = request.payloadLength() == 16 ? request.payload().getLong(request.payloadOffset() + 8) : 0;
        if (count < 1 || count > LogDbRpc.GRANT_MAX) {
            responder.fail(LogDbRpc.BAD_REQUEST, "GRANT count=" + count + ": need 1 <= count <= "
                + LogDbRpc.GRANT_MAX);
            return;
        }
        final long[] granted = table.grantSlots(count, holder);
        if (granted.length == 0) {
            responder.fail(LogDbRpc.FULL, "table " + table.schema().name() + " on memory node " + db.nic().node()
                + " is full (capacity " + table.schema().capacity() + ")");
            return;
        }
        scratch.putInt(0, granted.length);
        scratch.putInt(4, 0);
        for (int i = 0; i < granted.length; i++) {
            scratch.putLong(8 + 8 * i, granted[i]);
        }
        responder.reply(scratch, 0, 8 + 8 * granted.length);
    }

    private void reclaim(final RpcRequest request, final RpcResponder responder) {
        final Table table = table(request, responder, 16);
        if (table == null) {
            return;
        }
        final long holder = request.payload().getLong(request.payloadOffset() + 8);
        if (holder == 0) {
            responder.fail(LogDbRpc.BAD_REQUEST, "RECLAIM of holder 0 (slots granted to none are not tracked)");
            return;
        }
        scratch.putLong(0, table.reclaimGranted(holder));
        responder.reply(scratch, 0, 8);
    }

    private void keys(final RpcRequest request, final RpcResponder responder) {
        final Table table = table(request, responder, 16);
        if (table == null) {
            return;
        }
        final int limit = request.payload().getInt(request.payloadOffset() + 4);
        final long skip = request.payload().getLong(request.payloadOffset() + 8);
        if (limit < 1 || limit > LogDbRpc.KEYS_MAX || skip < 0) {
            responder.fail(LogDbRpc.BAD_REQUEST, "KEYS limit=" + limit + " skip=" + skip + ": need 1 <= limit <= "
                + LogDbRpc.KEYS_MAX + " and skip >= 0");
            return;
        }
        final long[] seen = {0};
        final int[] count = {0};
        table.forEachKey((key, pointer) -> {
            if (seen[0]++ >= skip && count[0] < limit) {
                scratch.putLong(LogDbRpc.KEYS_REPLY_HEADER_BYTES + 8 * count[0]++, key);
            }
        });
        scratch.putInt(0, count[0]);
        scratch.putInt(4, 0);
        scratch.putLong(8, seen[0]);
        responder.reply(scratch, 0, LogDbRpc.KEYS_REPLY_HEADER_BYTES + 8 * count[0]);
    }

    private void abandon(final RpcRequest request, final RpcResponder responder) {
        final Table table = table(request, responder, 24);
        if (table == null) {
            return;
        }
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final Table.InsertLock lock = lockOf(p.getInt(at + 4));
        if (lock == null) {
            responder.fail(LogDbRpc.BAD_REQUEST, "malformed ABANDON");
            return;
        }
        if (table.abandonInsert(p.getLong(at + 8), p.getLong(at + 16), lock) != Table.OK) {
            responder.fail(LogDbRpc.STALE, "no insert of key " + p.getLong(at + 8) + " at that pointer");
            return;
        }
        scratch.putLong(0, 0);
        responder.reply(scratch, 0, 8);
    }

    private void answer(final RpcResponder responder, final int length, final int prefix) {
        if (length == Table.STALE) {
            responder.fail(LogDbRpc.STALE, "stale object pointer");
        } else if (length < 0) {
            responder.fail(LogDbRpc.NOT_FOUND, "no version visible");
        } else {
            responder.reply(scratch, 0, prefix + length);
        }
    }
}
