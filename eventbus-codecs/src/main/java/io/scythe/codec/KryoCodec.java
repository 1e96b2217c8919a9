package io.scythe.codec;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import com.esotericsoftware.kryo.util.Pool;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.MessageCodec;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;

/**
 * A Vert.x {@link MessageCodec} that writes a message with Kryo. Messages must be immutable (records are ideal):
 * local delivery hands the same object to the consumer, with no copy.
 *
 * <p>Only registered classes cross the wire ({@code registrationRequired}), so a peer cannot make this node
 * instantiate an arbitrary class. Registration ids are derived from class names, so every node agrees on them
 * whatever order its modules register in; a collision is refused at registration.
 *
 * <p>Wire form: a 4-byte length, then the Kryo bytes of the object (its registered class id first).
 */
public final class KryoCodec<T> implements MessageCodec<T, T> {
    /** Largest encoded message accepted from the wire; a longer one is malformed. */
    public static final int MAX_MESSAGE_BYTES = 16 << 20;
    private static final int FIRST_USER_ID = 100;

    private static final Map<Class<?>, Integer> REGISTERED = Collections.synchronizedMap(new LinkedHashMap<>());
    private static final Map<Integer, Class<?>> BY_ID = Collections.synchronizedMap(new HashMap<>());
    private static volatile int generation;

    static {
        for (final Class<?> type : List.of(ArrayList.class, HashMap.class, LinkedHashMap.class, long[].class,
            int[].class, byte[].class, String[].class, Object[].class)) {
            registerType(type);
        }
        registerType(List.of().getClass());
        registerType(List.of(1).getClass());
        registerType(Map.of().getClass());
        registerType(Map.of(1, 1).getClass());
    }

    private final Class<T> type;
    private final String name;
    private volatile Pool<Kryo> pool;
    private int poolGeneration = -1;

    private KryoCodec(final Class<T> type) {
        this.type = type;
        this.name = "scythe-kryo:" + type.getName();
    }

    /**
     * Registers {@code types} for the wire (and their codecs as the event bus's default codec for each); types that
     * only appear nested inside messages (enums, element records) must be registered too.
     */
    public static void register(final EventBus eventBus, final Class<?>... types) {
        for (final Class<?> t : types) {
            registerType(t);
        }
        for (final Class<?> t : types) {
            registerDefault(eventBus, t);
        }
    }

    /** Registers nested types without making them event-bus messages. */
    public static void registerNested(final Class<?>... types) {
        for (final Class<?> t : types) {
            registerType(t);
        }
    }

    private static <T> void registerDefault(final EventBus eventBus, final Class<T> t) {
        try {
            eventBus.registerDefaultCodec(t, new KryoCodec<>(t));
        } catch (final IllegalStateException alreadyRegistered) {
            // Another verticle of this Vert.x instance registered it first: same codec, nothing to do.
        }
    }

    private static synchronized void registerType(final Class<?> t) {
        if (REGISTERED.containsKey(t)) {
            return;
        }
        final int id = idOf(t);
        final Class<?> clash = BY_ID.putIfAbsent(id, t);
        if (clash != null && clash != t) {
            throw new IllegalStateException("Kryo id " + id + " of " + t.getName() + " collides with "
                + clash.getName() + "; rename one of them");
        }
        REGISTERED.put(t, id);
        generation++;
    }

    /** Stable id from the class name (CRC32), clear of Kryo's built-in ids. */
    static int idOf(final Class<?> t) {
        final CRC32 crc = new CRC32();
        crc.update(t.getName().getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return FIRST_USER_ID + (int) (crc.getValue() & 0x3fff_ffffL);
    }

    private Pool<Kryo> pool() {
        // Rebuilt when more types were registered since, so every Kryo knows every type.
        final int current = generation;
        Pool<Kryo> p = pool;
        if (p == null || poolGeneration != current) {
            synchronized (this) {
                p = new Pool<>(true, false, 64) {
                    @Override
                    protected Kryo create() {
                        final Kryo kryo = BoundedSerializers.newKryo();
                        kryo.setRegistrationRequired(true);
                        kryo.setReferences(false);
                        BoundedSerializers.install(kryo);
                        synchronized (KryoCodec.class) {
                            REGISTERED.forEach(kryo::register);
                            BoundedSerializers.replaceUnbounded(kryo, REGISTERED.keySet());
                        }
                        return kryo;
                    }
                };
                pool = p;
                poolGeneration = current;
            }
        }
        return p;
    }

    /** Encodes {@code message} (length prefix, class id, fields). */
    public byte[] encode(final T message) {
        final Pool<Kryo> p = pool();
        final Kryo kryo = p.obtain();
        try (Output output = new Output(256, MAX_MESSAGE_BYTES)) {
            kryo.writeClassAndObject(output, message);
            return output.toBytes();
        } finally {
            p.free(kryo);
        }
    }

    /**
     * Decodes bytes made by {@link #encode}.
     *
     * @throws MalformedMessageException naming the codec when the bytes are not a valid message of this type
     */
    public T decode(final byte[] bytes) {
        final Pool<Kryo> p = pool();
        final Kryo kryo = p.obtain();
        try (Input input = new Input(bytes)) {
            final Object value = kryo.readClassAndObject(input);
            if (!type.isInstance(value)) {
                throw new MalformedMessageException(name + ": expected " + type.getName() + " but got "
                    + (value == null ? "null" : value.getClass().getName()));
            }
            return type.cast(value);
        } catch (final MalformedMessageException e) {
            throw e;
        } catch (final RuntimeException e) { // untrusted bytes: whatever a serializer threw (a bad class id, a bad
            // count, a record constructor refusing its fields) means the message is malformed, never a crash
            final String what = e instanceof KryoException ? e.getMessage() : e.toString();
            throw new MalformedMessageException(name + ": malformed message (" + what + ")", e);
        } finally {
            p.free(kryo);
        }
    }

    @Override
    public void encodeToWire(final Buffer buffer, final T message) {
        final byte[] bytes = encode(message);
        buffer.appendInt(bytes.length).appendBytes(bytes);
    }

    @Override
    public T decodeFromWire(final int pos, final Buffer buffer) {
        final int length = buffer.getInt(pos);
        if (length < 0 || length > MAX_MESSAGE_BYTES || pos + 4 + length > buffer.length()) {
            throw new MalformedMessageException(name + ": bad length " + length);
        }
        return decode(buffer.getBytes(pos + 4, pos + 4 + length));
    }

    @Override
    public T transform(final T message) {
        return message;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public byte systemCodecID() {
        return -1;
    }

    /** The codec for {@code type}; it must be registered. */
    public static <T> KryoCodec<T> of(final Class<T> type) {
        registerType(type);
        return new KryoCodec<>(type);
    }
}
