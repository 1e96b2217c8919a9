/**
 * Kryo-backed Vert.x message codecs for every message that crosses the event bus. Register a message type once per
 * Vert.x instance with {@link io.scythe.codec.KryoCodec#register}; local delivery passes the (immutable) object
 * itself, clustered delivery encodes it.
 */
package io.scythe.codec;
