package io.quorumkv.client;

import java.net.URI;

import io.netty.buffer.ByteBuf;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

/**
 * How a range answer's body becomes records. Today's server speaks one format,
 * {@link RecordChunkFormat} (one HTTP chunk per record, {@code key\nvalue}); DESIGN §2
 * plans a self-delimiting one chosen by content negotiation, with {@code limit} and
 * resumable paging. Such a format plugs in here: it names its media type for the
 * {@code Accept} header, decodes its own framing from the body's buffers, and, with
 * paging, its decoder can end one page's records with the cursor the client asks the next
 * page from.
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
