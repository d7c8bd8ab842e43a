package io.quorumkv.service.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import java.util.Arrays;
import java.util.List;

import io.quorumkv.service.replication.BatchCodec.MalformedBatchException;
import io.quorumkv.service.replication.BatchCodec.Operation;
import io.quorumkv.service.replication.BatchCodec.Result;
import io.quorumkv.storage.Entry;
import org.junit.jupiter.api.Test;

class BatchCodecTest {

	private static final byte[] K1 = { 'a' };

	private static final byte[] K2 = { 0, (byte) 0xFF, 'b' };

	private static final byte[] K3 = { 'c', ' ' };

	private final List<Operation> operations = List.of(Operation.get(K1),
			Operation.upsert(Entry.value(K2, new byte[] { 1, 2, 3 }, 7)), Operation.upsert(Entry.tombstone(K3, 9)),
			Operation.get(K2), Operation.upsert(Entry.value(K1, new byte[0], Long.MAX_VALUE)),
			Operation.upsert(Entry.expiring(K3, new byte[] { 4 }, 8, 1_000_000)));

	@Test
	void requestsRoundTripWithValuesTombstonesAndEmptyValues() {
		byte[] body = BatchCodec.encodeRequest(this.operations);
		assertThat(body).hasSize(this.operations.stream().mapToInt(Operation::encodedSize).sum());
		List<Operation> decoded = BatchCodec.decodeRequest(body, 16);
		assertThat(decoded).hasSize(6);
		for (int i = 0; i < decoded.size(); i++) {
			assertThat(decoded.get(i).key()).isEqualTo(this.operations.get(i).key());
			assertThat(decoded.get(i).entry()).isEqualTo(this.operations.get(i).entry());
		}
	}

	@Test
	void answersRoundTripAndKeepTheOrder() {
		List<Result> results = List.of(Result.found(Entry.value(K1, new byte[] { 9 }, 3)), Result.KEPT,
				Result.failed("disk full"), Result.found(Entry.expiring(K2, new byte[] { 5 }, 3, -4)), Result.KEPT,
				Result.KEPT);
		byte[] body = BatchCodec.encodeResponse(results);
		List<Result> decoded = BatchCodec.decodeResponse(body, this.operations, 16);
		assertThat(decoded).containsExactlyElementsOf(results);
		List<Result> absent = BatchCodec.decodeResponse(
				BatchCodec.encodeResponse(
						List.of(Result.ABSENT, Result.KEPT, Result.KEPT, Result.found(null), Result.KEPT, Result.KEPT)),
				this.operations, 16);
		assertThat(absent).extracting(Result::entry).containsOnlyNulls();
		assertThat(absent.get(3)).isSameAs(Result.ABSENT);
	}

	@Test
	void framesWithoutExpiryAreTheFramesOfBefore() {
		// An upsert of a value and of a tombstone as a node without expiry sends them.
		byte[] old = { 0x02, 0, 0, 0, 1, 'a', 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 2, 1, 2, 0x02, 0, 0, 0, 1, 'b', 0, 0, 0,
				0, 0, 0, 0, 9, -1, -1, -1, -1 };
		List<Operation> decoded = BatchCodec.decodeRequest(old, 16);
		assertThat(decoded).extracting(Operation::entry)
			.containsExactly(Entry.value(K1, new byte[] { 1, 2 }, 7), Entry.tombstone(new byte[] { 'b' }, 9));
		assertThat(BatchCodec.encodeRequest(decoded)).isEqualTo(old);
	}

	@Test
	void anExpiringFrameWithoutAnExpiryOrALengthIsMalformed() {
		byte[] body = BatchCodec.encodeRequest(List.of(Operation.upsert(Entry.expiring(K1, new byte[] { 1 }, 7, 9))));
		assertThat(body).hasSize(1 + 4 + 1 + 8 + 4 + 8 + 4 + 1);
		for (int cut = 1; cut < body.length; cut++) {
			int length = cut;
			assertThatExceptionOfType(MalformedBatchException.class)
				.isThrownBy(() -> BatchCodec.decodeRequest(Arrays.copyOf(body, length), 16));
		}
		byte[] never = body.clone();
		java.nio.ByteBuffer.wrap(never).putLong(1 + 4 + 1 + 8 + 4, Long.MAX_VALUE);
		assertThatExceptionOfType(MalformedBatchException.class).isThrownBy(() -> BatchCodec.decodeRequest(never, 16))
			.withMessageContaining("expiring value");
		byte[] negative = body.clone();
		java.nio.ByteBuffer.wrap(negative).putInt(1 + 4 + 1 + 8 + 4 + 8, -1);
		assertThatExceptionOfType(MalformedBatchException.class)
			.isThrownBy(() -> BatchCodec.decodeRequest(negative, 16));
	}

	@Test
	void longFailureMessagesAreCutToFitTheirLengthField() {
		String message = "é".repeat(10_000);
		List<Result> decoded = BatchCodec.decodeResponse(BatchCodec.encodeResponse(List.of(Result.failed(message))),
				List.of(Operation.get(K1)), 16);
		assertThat(decoded.getFirst().failure()).hasSizeLessThan(600).startsWith("éé");
	}

	@Test
	void malformedRequestsAreRefusedWithoutReadingPastTheBody() {
		byte[] body = BatchCodec.encodeRequest(this.operations);
		for (int cut = 1; cut < body.length; cut++) {
			byte[] truncated = Arrays.copyOf(body, cut);
			boolean boundary = isOperationBoundary(cut);
			if (boundary) {
				assertThat(BatchCodec.decodeRequest(truncated, 16)).hasSizeLessThan(this.operations.size());
			}
			else {
				assertThatExceptionOfType(MalformedBatchException.class)
					.isThrownBy(() -> BatchCodec.decodeRequest(truncated, 16));
			}
		}
		assertThatExceptionOfType(MalformedBatchException.class)
			.isThrownBy(() -> BatchCodec.decodeRequest(new byte[] { 7 }, 16))
			.withMessageContaining("unknown operation");
		assertThatExceptionOfType(MalformedBatchException.class)
			.isThrownBy(() -> BatchCodec.decodeRequest(BatchCodec.encodeRequest(this.operations), 2))
			.withMessageContaining("key length 3");
		assertThatExceptionOfType(MalformedBatchException.class)
			.isThrownBy(() -> BatchCodec.decodeRequest(new byte[] { BatchCodec.GET, 0, 0, 0, 0 }, 16))
			.withMessageContaining("key length 0");
		byte[] hugeValue = { BatchCodec.UPSERT, 0, 0, 0, 1, 'k', 0, 0, 0, 0, 0, 0, 0, 1, 0x7F, 0, 0, 0 };
		assertThatExceptionOfType(MalformedBatchException.class)
			.isThrownBy(() -> BatchCodec.decodeRequest(hugeValue, 16))
			.withMessageContaining("value length");
	}

	@Test
	void answersThatDoNotMatchTheOperationsAreRefused() {
		List<Operation> oneGet = List.of(Operation.get(K1));
		List<Operation> oneUpsert = List.of(Operation.upsert(Entry.tombstone(K1, 1)));
		assertThatExceptionOfType(MalformedBatchException.class)
			.isThrownBy(() -> BatchCodec.decodeResponse(new byte[0], oneGet, 16))
			.withMessageContaining("0 results for 1");
		assertThatExceptionOfType(MalformedBatchException.class)
			.isThrownBy(() -> BatchCodec.decodeResponse(BatchCodec.encodeResponse(List.of(Result.KEPT)), oneGet, 16));
		assertThatExceptionOfType(MalformedBatchException.class).isThrownBy(
				() -> BatchCodec.decodeResponse(BatchCodec.encodeResponse(List.of(Result.ABSENT)), oneUpsert, 16));
		assertThatExceptionOfType(MalformedBatchException.class)
			.isThrownBy(() -> BatchCodec
				.decodeResponse(BatchCodec.encodeResponse(List.of(Result.found(Entry.tombstone(K2, 1)))), oneGet, 16))
			.withMessageContaining("another key");
		assertThatExceptionOfType(MalformedBatchException.class)
			.isThrownBy(() -> BatchCodec.decodeResponse(BatchCodec.encodeResponse(List.of(Result.KEPT, Result.KEPT)),
					oneUpsert, 16))
			.withMessageContaining("after the last result");
	}

	private boolean isOperationBoundary(int offset) {
		int position = 0;
		for (Operation operation : this.operations) {
			position += operation.encodedSize();
			if (position == offset) {
				return true;
			}
		}
		return false;
	}

}
