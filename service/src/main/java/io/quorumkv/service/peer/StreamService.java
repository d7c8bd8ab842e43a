package io.quorumkv.service.peer;

import reactor.core.publisher.Mono;

/**
 * A feature's protocol on the replica streams: the replica side of its
 * {@link StreamFrames#CALL} operations, sent with
 * {@link ReplicaStreams#call(io.quorumkv.service.cluster.Node, byte, byte[])}. The
 * transport carries the payloads both ways without reading them; the feature owns their
 * format. One bean per feature, each with its own {@link #service()} byte.
 */
public interface StreamService {

	/** The byte that names this feature in a call's frame. */
	byte service();

	/**
	 * Answers one call; the reply must fit in a frame. A failure is sent back as the
	 * operation's failure. Never blocks the calling event loop.
	 * @param sender the calling node's id
	 */
	Mono<byte[]> serve(byte[] payload, String sender);

}
