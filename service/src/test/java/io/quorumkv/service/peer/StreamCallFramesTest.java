package io.quorumkv.service.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;

import io.quorumkv.service.peer.StreamFrames.Operation;
import io.quorumkv.service.peer.StreamFrames.Result;
import org.junit.jupiter.api.Test;

/**
 * A feature's call and its reply on a replica stream: the payloads cross as they are,
 * with the service byte, and a frame whose lengths disagree is malformed.
 */
class StreamCallFramesTest {

	private static final byte[] PAYLOAD = { 9, 8, 7, 0, 1 };

	private static ByteBuffer withoutLength(byte[] frame) {
		ByteBuffer in = ByteBuffer.wrap(frame);
		assertThat(in.getInt()).isEqualTo(frame.length - StreamFrames.LENGTH);
		return in.slice();
	}

	@Test
	void aCallCarriesItsServiceAndPayloadAsTheyAre() {
		ByteBuffer out = ByteBuffer
			.allocate(StreamFrames.operationSize(StreamFrames.CALL, Operation.NO_KEY, null, PAYLOAD));
		StreamFrames.putOperation(out, 42, StreamFrames.CALL, 7, 500, Operation.NO_KEY, null, (byte) 3, PAYLOAD);
		Operation read = StreamFrames.readOperation(withoutLength(out.array()), 16, 16);
		assertThat(read.id()).isEqualTo(42);
		assertThat(read.kind()).isEqualTo(StreamFrames.CALL);
		assertThat(read.epoch()).isEqualTo(7);
		assertThat(read.service()).isEqualTo((byte) 3);
		assertThat(read.payload()).containsExactly(PAYLOAD);
	}

	@Test
	void aReplyCarriesItsPayloadAsItIs() {
		ByteBuffer encoded = StreamResults.encode(List.of(Result.reply(5, PAYLOAD), Result.kept(6)));
		List<Result> read = StreamResults.decodeAll(Arrays.copyOf(encoded.array(), encoded.limit()), 1024);
		assertThat(read).hasSize(2);
		assertThat(read.get(0).type()).isEqualTo(StreamFrames.REPLY);
		assertThat(read.get(0).payload()).containsExactly(PAYLOAD);
		assertThat(read.get(1).type()).isEqualTo(StreamFrames.KEPT);
	}

	@Test
	void aCallWhosePayloadLengthDisagreesWithItsFrameIsMalformed() {
		ByteBuffer out = ByteBuffer
			.allocate(StreamFrames.operationSize(StreamFrames.CALL, Operation.NO_KEY, null, PAYLOAD));
		StreamFrames.putOperation(out, 1, StreamFrames.CALL, 0, 500, Operation.NO_KEY, null, (byte) 1, PAYLOAD);
		byte[] frame = out.array();
		// The payload length field follows length, id, kind, epoch, budget and service.
		ByteBuffer.wrap(frame).putInt(4 + 4 + 1 + 8 + 4 + 1, PAYLOAD.length + 1);
		assertThatThrownBy(() -> StreamFrames.readOperation(withoutLength(frame), 16, 16))
			.isInstanceOf(EntryFrame.MalformedFrameException.class);
	}

}
