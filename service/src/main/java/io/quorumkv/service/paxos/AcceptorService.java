package io.quorumkv.service.paxos;

import io.quorumkv.service.peer.StreamService;
import reactor.core.publisher.Mono;

/**
 * The acceptor on the replica streams: decodes a Paxos request ({@link Messages}), asks
 * the {@link Acceptor}, encodes its answer.
 */
final class AcceptorService implements StreamService {

	/** The byte that names Paxos in a replica stream's call. */
	static final byte SERVICE = 1;

	private final Acceptor acceptor;

	private final int maxKeySize;

	private final int maxValueSize;

	AcceptorService(Acceptor acceptor, int maxKeySize, int maxValueSize) {
		this.acceptor = acceptor;
		this.maxKeySize = maxKeySize;
		this.maxValueSize = maxValueSize;
	}

	@Override
	public byte service() {
		return SERVICE;
	}

	@Override
	public Mono<byte[]> serve(byte[] payload, String sender) {
		return Mono.defer(() -> {
			Messages.Request request = Messages.readRequest(payload, this.maxKeySize, this.maxValueSize);
			if (request.entry() == null) {
				return this.acceptor.prepare(request.ballot(), request.key()).map(Messages::promise);
			}
			return this.acceptor.propose(new Proposal(request.ballot(), request.entry())).map(Messages::vote);
		});
	}

}
