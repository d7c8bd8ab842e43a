package io.quorumkv.client;

import java.net.URI;

import io.netty.buffer.ByteBuf;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

/**
 * How a range answer's body becomes records: the format names its media type for the
 * {@code Accept} header and decodes its own framing from the body's buffers. The client
 * reads ranges in the server's self-delimiting format, {@link NdjsonFormat}.
 */
interface ScanFormat {

	/** The {@code Accept} header to send, or null for the server's default format. */
	@Nullable String accept();

	/**
	 * Decodes a 200 answer's body. Each buffer is one HTTP chunk as the server sent it
	 * (the client keeps chunks whole, see {@link Transport}); buffers are released by
	 * Reactor Netty after the call, so the decoder copies what it keeps.
	 * @param node the node that answered (for error messages)
	 * @param chunks the body's chunks
	 */
	Flux<KeyValue> decode(URI node, Flux<ByteBuf> chunks);

}
