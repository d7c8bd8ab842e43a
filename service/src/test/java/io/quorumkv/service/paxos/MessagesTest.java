package io.quorumkv.service.paxos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import io.quorumkv.service.paxos.Messages.Promise;
import io.quorumkv.service.peer.EntryFrame;
import io.quorumkv.storage.Entry;
import org.junit.jupiter.api.Test;

/** The Paxos messages read back as they were written; a cut one is malformed. */
class MessagesTest {

	private static final byte[] KEY = "k".getBytes(StandardCharsets.UTF_8);

	@Test
	void aPromiseCarriesItsAcceptedProposalCurrentEntryAndCommit() {
		Promise promise = new Promise(true, new Ballot(30, "a"),
				new Proposal(new Ballot(20, "b"), Entry.value(KEY, new byte[] { 1 }, 20)),
				Entry.value(KEY, new byte[] { 2 }, 10), false, new Ballot(15, "c"));
		assertThat(Messages.readPromise(Messages.promise(promise), 16, 16)).isEqualTo(promise);
		Promise refused = Promise.refused(new Ballot(40, "d"));
		assertThat(Messages.readPromise(Messages.promise(refused), 16, 16)).isEqualTo(refused);
	}

	@Test
	void aCommitNamesItsBallotKeyAndTimestamp() {
		byte[] payload = Messages.commit(new Ballot(30, "a"), Entry.value(KEY, new byte[] { 1 }, 25));
		Messages.Request request = Messages.readRequest(payload, 16, 16);
		assertThat(request.verb()).isEqualTo(Messages.COMMIT);
		assertThat(request.ballot()).isEqualTo(new Ballot(30, "a"));
		assertThat(request.key()).isEqualTo(KEY);
		assertThat(request.timestamp()).isEqualTo(25);
		assertThat(request.entry()).isNull();
		assertThatThrownBy(() -> Messages.readRequest(Arrays.copyOf(payload, payload.length - 1), 16, 16))
			.isInstanceOf(EntryFrame.MalformedFrameException.class);
		assertThat(Messages.readRecorded(Messages.recorded(true))).isTrue();
		assertThat(Messages.readRecorded(Messages.recorded(false))).isFalse();
	}

}
