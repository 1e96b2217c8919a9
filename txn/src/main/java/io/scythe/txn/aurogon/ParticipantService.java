package io.scythe.txn.aurogon;

import io.scythe.bridge.Bridge;
import io.scythe.rrpc.RpcRequest;
import io.scythe.rrpc.RpcResponder;
import io.scythe.rrpc.RpcServer;
import io.scythe.storage.LogDb;
import io.scythe.storage.ObjectLayout;
import io.scythe.storage.Table;
import io.scythe.txn.runtime.LoopTimers;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The Aurogon participant of one memory node, served over RRPC ({@link AurogonRpc}). Its records start from the node's
 * LogDB (a record's first version is the object's value at its LogDB version) and its newest committed values are
 * written through to the LogDB object, so end-of-run checks and loaders see Aurogon's data as every other protocol's.
 * Holds nothing until an Aurogon request arrives. Runs on the node's RPC loop.
 */
public final class ParticipantService {
    private final LogDb db;
    private final Participant participant;
    private LoopTimers timers;

    ParticipantService(final LogDb db, final Participant.Deferral deferral) {
        this.db = db;
        this.participant = new Participant(new LogDbBacking(), this::defer, deferral);
    }

    public Participant participant() {
        return participant;
    }

    ParticipantService register(final RpcServer server) {
        server.handle(AurogonRpc.READ, this::read);
        server.handle(AurogonRpc.INSTALL, this::install);
        server.handle(AurogonRpc.COMMIT, this::commit);
        server.handle(AurogonRpc.ROLLBACK, this::rollback);
        server.handle(AurogonRpc.INSERT, this::insert);
        return this;
    }

    private void defer(final long delayNs, final Runnable task) {
        if (timers == null) {
            timers = LoopTimers.on(Bridge.current()); // this node's loop (the simulator runs many on one thread)
        }
        timers.after(delayNs).onComplete(done -> task.run());
    }

    private static boolean wellFormed(final RpcRequest request, final RpcResponder responder, final int length,
                                      final String what) {
        if (request.payloadLength() != length) {
            responder.fail(AurogonRpc.BAD_REQUEST, "Aurogon " + what + " takes " + length + " bytes, got "
                + request.payloadLength());
            return false;
        }
        return true;
    }

    private void read(final RpcRequest request, final RpcResponder responder) {
        if (!wellFormed(request, responder, AurogonRpc.HEADER_BYTES, "READ")) {
            return;
        }
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        participant.read(p.getInt(at + AurogonRpc.TABLE_OFFSET), p.getLong(at + AurogonRpc.KEY_OFFSET),
            p.getLong(at + AurogonRpc.TS_OFFSET), p.getInt(at + AurogonRpc.FLAGS_OFFSET), (status, wts, value) -> {
                final int length = status == Participant.OK ? value.length : 0; // ABSENT: no value
                if (AurogonRpc.READ_REPLY_HEADER_BYTES + length > responder.maxReplyBytes()) {
                    responder.fail(AurogonRpc.BAD_REQUEST, "Aurogon READ: a value of " + length + " bytes does not "
                        + "fit one reply (" + responder.maxReplyBytes() + " bytes)");
                    return;
                }
                final UnsafeBuffer reply = new UnsafeBuffer(new byte[AurogonRpc.READ_REPLY_HEADER_BYTES + length]);
                reply.putInt(0, status);
                reply.putInt(4, length);
                reply.putLong(8, wts);
                reply.putLong(AurogonRpc.READ_SEEN_OFFSET, participant.maxTs());
                if (length > 0) {
                    reply.putBytes(AurogonRpc.READ_REPLY_HEADER_BYTES, value);
                }
                responder.reply(reply, 0, reply.capacity());
            });
    }

    private void install(final RpcRequest request, final RpcResponder responder) {
        if (wellFormed(request, responder, AurogonRpc.HEADER_BYTES, "INSTALL")) {
            final DirectBuffer p = request.payload();
            final int at = request.payloadOffset();
            status(responder, participant.install(p.getInt(at), p.getLong(at + AurogonRpc.KEY_OFFSET),
                p.getLong(at + AurogonRpc.TS_OFFSET)));
        }
    }

    private void insert(final RpcRequest request, final RpcResponder responder) {
        if (wellFormed(request, responder, AurogonRpc.HEADER_BYTES, "INSERT")) {
            final DirectBuffer p = request.payload();
            final int at = request.payloadOffset();
            final long[] below = new long[1];
            final int status = participant.insert(p.getInt(at), p.getLong(at + AurogonRpc.KEY_OFFSET),
                p.getLong(at + AurogonRpc.TS_OFFSET), below);
            final UnsafeBuffer reply = new UnsafeBuffer(new byte[AurogonRpc.INSERT_REPLY_BYTES]);
            reply.putInt(0, status);
            reply.putLong(AurogonRpc.STATUS_SEEN_OFFSET, participant.maxTs());
            reply.putLong(AurogonRpc.INSERT_BELOW_OFFSET, below[0]);
            responder.reply(reply, 0, reply.capacity());
        }
    }

    private void commit(final RpcRequest request, final RpcResponder responder) {
        final DirectBuffer p = request.payload();
        final int at = request.payloadOffset();
        final int length = request.payloadLength() < AurogonRpc.HEADER_BYTES ? Integer.MIN_VALUE
            : p.getInt(at + AurogonRpc.LENGTH_OFFSET);
        if (length < AurogonRpc.DELETE) {
            responder.fail(AurogonRpc.BAD_REQUEST, "malformed Aurogon COMMIT");
            return;
        }
        if (!wellFormed(request, responder, AurogonRpc.HEADER_BYTES + Math.max(length, 0), "COMMIT")) {
            return;
        }
        final byte[] value = length == AurogonRpc.DELETE ? null : new byte[length];
        if (value != null) {
            p.getBytes(at + AurogonRpc.HEADER_BYTES, value);
        }
        status(responder, participant.commit(p.getInt(at), p.getLong(at + AurogonRpc.KEY_OFFSET),
            p.getLong(at + AurogonRpc.TS_OFFSET), value));
    }

    private void rollback(final RpcRequest request, final RpcResponder responder) {
        if (wellFormed(request, responder, AurogonRpc.HEADER_BYTES, "ROLLBACK")) {
            final DirectBuffer p = request.payload();
            final int at = request.payloadOffset();
            status(responder, participant.rollback(p.getInt(at), p.getLong(at + AurogonRpc.KEY_OFFSET),
                p.getLong(at + AurogonRpc.TS_OFFSET)));
        }
    }

    private void status(final RpcResponder responder, final int status) {
        final UnsafeBuffer reply = new UnsafeBuffer(new byte[AurogonRpc.STATUS_REPLY_BYTES]);
        reply.putInt(0, status);
        reply.putLong(AurogonRpc.STATUS_SEEN_OFFSET, participant.maxTs());
        responder.reply(reply, 0, reply.capacity());
    }

    /** Records start from the LogDB object; the newest committed value is written back into it. */
    private final class LogDbBacking implements Participant.Backing {
        @Override
        public boolean hasTable(final int tableId) {
            return db.table(tableId) != null;
        }

        @Override
        public byte[] load(final int tableId, final long key, final long[] version) {
            final Table table = db.table(tableId);
            final long pointer = table == null ? 0 : table.lookup(key);
            final int at = pointer == 0 ? -1 : table.offsetOf(pointer);
            if (at < 0) {
                version[0] = table == null ? 0 : table.absentBound();
                return null;
            }
            final var memory = table.objectMemory();
            version[0] = memory.getLong(at + ObjectLayout.VERSION_OFFSET) & ~ObjectLayout.VERSION_BUSY;
            if ((memory.getShort(at + ObjectLayout.FLAGS_OFFSET) & ObjectLayout.FLAG_DELETED) != 0) {
                return null; // deleted at its version
            }
            final byte[] value = new byte[memory.getInt(at + ObjectLayout.VALUE_LENGTH_OFFSET)];
            memory.getBytes(at + ObjectLayout.VALUE_OFFSET, value);
            return value;
        }

        @Override
        public void committed(final int tableId, final long key, final long wts, final byte[] value) {
            final Table table = db.table(tableId);
            int status = writeThrough(table, key, wts, value);
            if (status == Table.VERSION_SPACE_FULL) {
                // LogDB's chain of old values serves no Aurogon read (the participant keeps its own versions): free
                // what is below this commit and write again.
                table.reclaim(wts);
                status = writeThrough(table, key, wts, value);
            }
            if (status != Table.OK) {
                throw new IllegalStateException("Aurogon could not write committed " + table.schema().name() + "/"
                    + key + " through to LogDB: status " + status);
            }
        }

        /** A delete ({@code value} null), an insert or revival (no live object), or an update. */
        private int writeThrough(final Table table, final long key, final long wts, final byte[] value) {
            if (value == null) {
                return table.delete(key, wts);
            }
            final long pointer = table.lookup(key);
            final int at = pointer == 0 ? -1 : table.offsetOf(pointer);
            final boolean live = at >= 0 && (table.objectMemory().getShort(at + ObjectLayout.FLAGS_OFFSET)
                & ObjectLayout.FLAG_DELETED) == 0;
            if (live) {
                return table.update(pointer, new UnsafeBuffer(value), 0, value.length, wts);
            }
            final long inserted = table.insert(key, new UnsafeBuffer(value), 0, value.length, wts);
            return inserted > 0 ? Table.OK : (int) inserted;
        }
    }
}
