package io.quorumkv.service.membership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.quorumkv.service.membership.TransferCodec.Frame;
import io.quorumkv.service.peer.EntryFrame;
import io.quorumkv.service.peer.FrameDecoder;
import io.quorumkv.service.peer.InternalApi;
import io.quorumkv.storage.Entry;
import org.junit.jupiter.api.Test;

/**
 * A transfer stream carries every kind of entry the replica scan's frames carry, the
 * expiry of an expiring value included, among its progress and estimate frames, whatever
 * the boundaries of the network buffers.
 */
class TransferCodecTest {

	private static final int MAX_FRAME = 1 << 20;

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	private final List<Entry> entries = List.of(Entry.value(bytes("a"), bytes("plain"), 5),
			Entry.tombstone(bytes("b"), 6), Entry.expiring(bytes("c"), bytes("lease"), 7, 7_000_007),
			Entry.expiring(bytes("d"), new byte[0], 8, 9), Entry.value(bytes("e"), new byte[0], 10));

	private byte[] stream() {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		out.writeBytes(TransferCodec.estimate(12_345));
		for (Entry entry : this.entries) {
			out.writeBytes(EntryFrame.encode(entry));
			if (Arrays.equals(entry.key(), bytes("c"))) {
				out.writeBytes(TransferCodec.progress(bytes("c-scanned"), 99));
			}
		}
		return out.toByteArray();
	}

	private static List<Entry> data(List<Frame> frames) {
		return frames.stream().filter(Frame.Data.class::isInstance).map((f) -> ((Frame.Data) f).entry()).toList();
	}

	@Test
	void everyKindOfEntryKeepsItsExpiryAmongProgressAndEstimateFrames() {
		FrameDecoder<TransferCodec.Frame> decoder = TransferCodec.decoder(MAX_FRAME);
		List<Frame> frames = decoder.decode(stream());
		assertThat(decoder.isComplete()).isTrue();
		assertThat(frames).hasSize(this.entries.size() + 2);
		assertThat(frames.getFirst()).isEqualTo(new Frame.Estimate(12_345));
		assertThat(frames.get(4)).isInstanceOfSatisfying(Frame.Progress.class, (progress) -> {
			assertThat(progress.key()).isEqualTo(bytes("c-scanned"));
			assertThat(progress.scannedBytes()).isEqualTo(99);
		});
		assertThat(data(frames)).containsExactlyElementsOf(this.entries);
		assertThat(data(frames).get(2).expiresAt()).isEqualTo(7_000_007);
	}

	@Test
	void framesCutAtEveryOffsetDecodeTheSame() {
		byte[] stream = stream();
		for (int cut = 0; cut <= stream.length; cut++) {
			FrameDecoder<TransferCodec.Frame> decoder = TransferCodec.decoder(MAX_FRAME);
			List<Frame> frames = new ArrayList<>(decoder.decode(Arrays.copyOfRange(stream, 0, cut)));
			frames.addAll(decoder.decode(Arrays.copyOfRange(stream, cut, stream.length)));
			assertThat(decoder.isComplete()).as("cut at %d", cut).isTrue();
			assertThat(data(frames)).as("cut at %d", cut).containsExactlyElementsOf(this.entries);
			assertThat(frames).as("cut at %d", cut).hasSize(this.entries.size() + 2);
		}
	}

	@Test
	void framesJoinedIntoChunksDecodeTheSame() {
		List<byte[]> frames = new ArrayList<>();
		frames.add(TransferCodec.estimate(12_345));
		for (Entry entry : this.entries) {
			frames.add(EntryFrame.encode(entry));
		}
		byte[] chunk = TransferSource.joined(frames);
		assertThat(chunk).isEqualTo(TransferSource.joined(List.of(TransferSource.joined(frames.subList(0, 2)),
				TransferSource.joined(frames.subList(2, frames.size())))));
		assertThat(TransferSource.joined(List.of(frames.get(1)))).isSameAs(frames.get(1));
		FrameDecoder<TransferCodec.Frame> decoder = TransferCodec.decoder(MAX_FRAME);
		assertThat(data(decoder.decode(chunk))).containsExactlyElementsOf(this.entries);
		assertThat(decoder.isComplete()).isTrue();
	}

	@Test
	void anUnknownValueLengthIsRefused() {
		byte[] frame = ByteBuffer.allocate(4 + 1 + 8 + 4).putInt(1).put((byte) 'k').putLong(1).putInt(-5).array();
		assertThatThrownBy(() -> TransferCodec.decoder(MAX_FRAME).decode(frame))
			.isInstanceOf(IllegalStateException.class)
			.hasMessageContaining("malformed transfer frame");
	}

}
