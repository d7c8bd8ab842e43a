package io.quorumkv.service.paxos;

import java.util.Objects;

import io.quorumkv.service.peer.StreamService;
import io.quorumkv.storage.Entry;
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
			Entry entry = request.entry();
			return switch (request.verb()) {
				case Messages.PREPARE -> this.acceptor.prepare(request.ballot(), request.key()).map(Messages::promise);
				case Messages.COMMIT ->
					this.acceptor.commit(request.ballot(), request.key(), request.timestamp()).map(Messages::recorded);
				default -> this.acceptor.propose(new Proposal(request.ballot(), Objects.requireNonNull(entry)))
					.map(Messages::vote);
			};
		});
	}

}
