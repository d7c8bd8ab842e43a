package io.quorumkv.service.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import io.quorumkv.storage.Entry;
import org.junit.jupiter.api.Test;

class FrameDecoderTest {

	private static List<Entry> sample() {
		Random random = new Random(5);
		List<Entry> entries = new ArrayList<>();
		for (int i = 0; i < 200; i++) {
			byte[] key = ("key-" + i).getBytes();
			byte[] value = Arrays.copyOf(new byte[] { (byte) i }, random.nextInt(300));
			entries.add((i % 7 == 0) ? Entry.tombstone(key, i)
					: (i % 3 == 0) ? Entry.expiring(key, value, -i, i * 1_000_000L) : Entry.value(key, value, -i));
		}
		return entries;
	}

	@Test
	void decodesFramesSplitAtEveryPossibleBoundary() {
		List<Entry> entries = sample();
		ByteArrayOutputStream stream = new ByteArrayOutputStream();
		entries.forEach((entry) -> stream.writeBytes(EntryFrame.encode(entry)));
		byte[] all = stream.toByteArray();
		for (int chunk : new int[] { 1, 2, 3, 7, 64, 1000, all.length }) {
			FrameDecoder<Entry> decoder = FrameDecoder.entries(1 << 20);
			List<Entry> decoded = new ArrayList<>();
			for (int offset = 0; offset < all.length; offset += chunk) {
				decoded.addAll(decoder.decode(Arrays.copyOfRange(all, offset, Math.min(all.length, offset + chunk))));
			}
			assertThat(decoded).as("chunks of %d", chunk).isEqualTo(entries);
			assertThat(decoder.isComplete()).isTrue();
		}
	}

	@Test
	void truncatedStreamIsIncomplete() {
		byte[] frame = EntryFrame.encode(Entry.value("k".getBytes(), "value".getBytes(), 1));
		FrameDecoder<Entry> decoder = FrameDecoder.entries(1 << 20);
		assertThat(decoder.decode(Arrays.copyOf(frame, frame.length - 1))).isEmpty();
		assertThat(decoder.isComplete()).isFalse();
	}

	@Test
	void absurdLengthsAreRejected() {
		FrameDecoder<Entry> decoder = FrameDecoder.entries(1024);
		assertThatThrownBy(() -> decoder.decode(new byte[] { 0x7F, 0, 0, 0, 1, 2 })).isInstanceOf(PeerException.class)
			.hasMessageContaining("key length");
	}

}
