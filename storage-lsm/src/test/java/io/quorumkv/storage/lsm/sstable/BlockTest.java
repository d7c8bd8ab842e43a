package io.quorumkv.storage.lsm.sstable;

import static io.quorumkv.storage.contract.Entries.bytes;
import static io.quorumkv.storage.contract.Entries.numberedKey;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.quorumkv.storage.Entry;
import org.junit.jupiter.api.Test;

class BlockTest {

	private static List<Entry> sample(int count) {
		List<Entry> entries = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			entries.add((i % 7 == 3) ? Entry.tombstone(numberedKey(i), -i)
					: (i % 5 == 1) ? Entry.expiring(numberedKey(i), bytes("lease-" + i), i, Long.MIN_VALUE + i)
							: Entry.value(numberedKey(i), bytes("value-" + i), Long.MAX_VALUE - i));
		}
		return entries;
	}

	private static Block build(List<Entry> entries) {
		BlockBuilder builder = new BlockBuilder();
		entries.forEach(builder::add);
		return Block.decode(builder.finish());
	}

	@Test
	void roundTripsEntriesWithPrefixCompressionAndRestarts() {
		List<Entry> entries = sample(100);
		Block block = build(entries);
		assertThat(block.entries()).containsExactlyElementsOf(entries);
		for (Entry e : entries) {
			assertThat(block.find(e.key())).isEqualTo(e);
		}
		assertThat(block.find(bytes("key-00000050x"))).isNull();
		assertThat(block.find(bytes("a"))).isNull();
		assertThat(block.find(bytes("z"))).isNull();
	}

	@Test
	void readsInPlaceFromASliceAndComparesKeyBytesUnsigned() {
		// Keys whose first byte runs through 0x00..0xEC: the restart search must compare
		// them unsigned, and the block is read where it lies inside a larger segment.
		List<Entry> entries = new ArrayList<>();
		for (int i = 0; i < 60; i++) {
			entries.add(Entry.value(bytes(i * 4, 0xF0), bytes("v" + i), i));
		}
		BlockBuilder builder = new BlockBuilder();
		entries.forEach(builder::add);
		byte[] raw = builder.finish();
		byte[] around = new byte[raw.length + 29];
		java.util.Arrays.fill(around, (byte) 0xAA);
		System.arraycopy(raw, 0, around, 13, raw.length);
		Block block = Block.decode(MemorySegment.ofArray(around).asSlice(13, raw.length), TableFormat.CURRENT);

		assertThat(block.entries()).containsExactlyElementsOf(entries);
		for (int i = 0; i < 60; i++) {
			assertThat(block.find(bytes(i * 4, 0xF0))).isEqualTo(entries.get(i));
			assertThat(block.find(bytes(i * 4 + 1))).isNull();
			assertThat(block.entriesFrom(bytes(i * 4 + 1))).containsExactlyElementsOf(entries.subList(i + 1, 60));
		}
		assertThat(block.find(bytes(0xFF, 0xFF))).isNull();
		assertThat(block.entriesFrom(bytes(0x00))).containsExactlyElementsOf(entries);
	}

	@Test
	void entriesFromSeeksBetweenAndOnKeys() {
		List<Entry> entries = sample(40);
		Block block = build(entries);
		assertThat(block.entriesFrom(numberedKey(17))).containsExactlyElementsOf(entries.subList(17, 40));
		assertThat(block.entriesFrom(bytes("key-00000016x"))).containsExactlyElementsOf(entries.subList(17, 40));
		assertThat(block.entriesFrom(bytes("a"))).containsExactlyElementsOf(entries);
		assertThat(block.entriesFrom(bytes("z"))).isEmpty();
	}

	@Test
	void keepsEmptyValuesApartFromTombstonesAndPrefixKeysApart() {
		List<Entry> entries = List.of(Entry.value(bytes("a"), new byte[0], 1), Entry.tombstone(bytes("ab"), 2),
				Entry.value(bytes(0x61, 0x62, 0x00), bytes(0xFF), 3));
		assertThat(build(entries).entries()).containsExactlyElementsOf(entries);
	}

	@Test
	void decodesKeysThatGrowAndShrinkAroundTheirSharedPrefixes() {
		// The decoder keeps its key and value buffers while the lengths stay the same:
		// each entry must still come out whole and its own.
		List<Entry> entries = List.of(Entry.value(bytes("abc"), bytes("v1"), 1),
				Entry.value(bytes("abd"), bytes("v2"), 2), Entry.value(bytes("abdefg"), bytes("v3"), 3),
				Entry.tombstone(bytes("abdefh"), 4), Entry.value(bytes("abe"), bytes("value-5"), 5),
				Entry.value(bytes("b"), bytes("value-6"), 6), Entry.value(bytes("ba"), new byte[0], 7),
				Entry.value(bytes("bb"), bytes("v8"), 8));
		List<Entry> decoded = build(entries).entries();
		assertThat(decoded).containsExactlyElementsOf(entries);
		assertThat(decoded.get(0).key()).isNotSameAs(decoded.get(1).key());
		assertThat(decoded.get(4).value()).isNotSameAs(decoded.get(5).value());
	}

	@Test
	void writesTheBytesOfVersion2() {
		// "ab" = "x" at 1; "ac" = "yz" at 2 expiring at 3 (shares "a"); "b" deleted at
		// -1;
		// "c" = 200 bytes at 0 (valueTag 202, a varint of two bytes); one restart at 0.
		byte[] big = new byte[200];
		Arrays.fill(big, (byte) 'v');
		BlockBuilder builder = new BlockBuilder();
		builder.add(Entry.value(bytes("ab"), bytes("x"), 1));
		builder.add(Entry.expiring(bytes("ac"), bytes("yz"), 2, 3));
		builder.add(Entry.tombstone(bytes("b"), -1));
		builder.add(Entry.value(bytes("c"), big, 0));
		ByteArrayOutputStream expected = new ByteArrayOutputStream();
		expected.writeBytes(new byte[] { 0, 2, 3, 0, 0, 0, 0, 0, 0, 0, 1, 'a', 'b', 'x' });
		expected.writeBytes(new byte[] { 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3, 2, 'c', 'y', 'z' });
		expected.writeBytes(new byte[] { 0, 1, 0, -1, -1, -1, -1, -1, -1, -1, -1, 'b' });
		expected.writeBytes(new byte[] { 0, 1, (byte) 0xCA, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 'c' });
		expected.writeBytes(big);
		expected.writeBytes(new byte[] { 0, 0, 0, 0, 0, 0, 0, 1 });
		assertThat(builder.finish()).isEqualTo(expected.toByteArray());
		// The builder starts again from nothing, after a value larger than its buffer
		// too.
		byte[] huge = new byte[20_000];
		Arrays.fill(huge, (byte) 'h');
		builder.add(Entry.value(bytes("h"), huge, 5));
		assertThat(Block.decode(builder.finish()).entries()).containsExactly(Entry.value(bytes("h"), huge, 5));
		builder.add(Entry.tombstone(bytes("a"), 0));
		assertThat(builder.finish())
			.isEqualTo(new byte[] { 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 'a', 0, 0, 0, 0, 0, 0, 0, 1 });
	}

	@Test
	void readsABlockOfVersion1() {
		// "a" = "xy" at 7, then "ab" deleted at 8, as version 1 wrote them: valueTag is
		// the value length + 1, 0 for a tombstone; one restart at 0.
		byte[] v1 = { 0, 1, 3, 0, 0, 0, 0, 0, 0, 0, 7, 'a', 'x', 'y', 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 8, 'b', 0, 0, 0, 0,
				0, 0, 0, 1 };
		assertThat(Block.decode(v1, TableFormat.VERSION_1).entries())
			.containsExactly(Entry.value(bytes("a"), bytes("xy"), 7), Entry.tombstone(bytes("ab"), 8));
		// The same bytes in version 2 mean other entries (valueTag 3: one byte, "x"),
		// which no longer end where the block says.
		assertThatThrownBy(() -> Block.decode(v1, TableFormat.VERSION_2).entries())
			.isInstanceOf(Block.BlockFormatException.class);
	}

	@Test
	void rejectsStructuralDamage() {
		BlockBuilder builder = new BlockBuilder();
		sample(20).forEach(builder::add);
		byte[] data = builder.finish();
		byte[] badCount = data.clone();
		badCount[badCount.length - 1] = 99;
		assertThatThrownBy(() -> Block.decode(badCount)).isInstanceOf(Block.BlockFormatException.class);
		byte[] badEntry = data.clone();
		badEntry[1] = (byte) 0x7F; // unshared length far past the block
		assertThatThrownBy(() -> Block.decode(badEntry).entries()).isInstanceOf(Block.BlockFormatException.class);
	}

}
