/**
 * The {@code tcp} provider: soft verbs over TCP for hosts without RDMA NICs (containers, laptops, the docker-compose
 * cluster). Each node runs a verbs server at its configured address; a connection begins with a HELLO naming the
 * cluster and both nodes (with room for the cluster secret of a later issue); a doorbell batch travels as one REQUEST
 * frame and comes back as one RESPONSE frame, many in flight. The responder executes requests in order on its regions
 * with the same checks as every provider ({@link io.scythe.fabric.emulated.OneSidedOps}) and keeps an RC responder's
 * error and revoked states. Frame layouts: {@link io.scythe.fabric.tcp.TcpFrames}. Threading: sockets live on Vert.x
 * event loops; completions reach their queue's owner through a lock-free inbox (no hop when, as in production, the
 * owner is the socket's loop). The cost model is not applied: the network's own latency is.
 */
package io.scythe.fabric.tcp;
