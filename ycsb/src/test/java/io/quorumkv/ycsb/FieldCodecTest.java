package io.quorumkv.ycsb;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;
import site.ycsb.ByteIterator;
import site.ycsb.RandomByteIterator;
import site.ycsb.StringByteIterator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class FieldCodecTest {

	@Test
	void ycsbsDefaultRecordRoundTrips() {
		Map<String, byte[]> expected = new TreeMap<>();
		Map<String, ByteIterator> fields = new HashMap<>();
		for (int i = 0; i < 10; i++) {
			RandomByteIterator random = new RandomByteIterator(100);
			byte[] bytes = random.toArray();
			expected.put("field" + i, bytes);
			fields.put("field" + i, new site.ycsb.ByteArrayByteIterator(bytes));
		}
		byte[] encoded = FieldCodec.encode(fields);
		assertThat(encoded).hasSize(1144);
		assertThat(FieldCodec.decode(encoded)).containsExactlyEntriesOf(expected);
	}

	@Test
	void anyBytesInNamesAndValuesRoundTrip() {
		Random random = new Random(29);
		for (int round = 0; round < 200; round++) {
			Map<String, byte[]> fields = new TreeMap<>();
			int count = random.nextInt(6);
			for (int i = 0; i < count; i++) {
				byte[] value = new byte[random.nextInt(40)];
				random.nextBytes(value);
				fields.put("f\n\0" + random.nextInt(1000) + "ключ", value);
			}
			assertThat(FieldCodec.decode(FieldCodec.encodeBytes(fields))).containsExactlyEntriesOf(fields);
		}
		assertThat(FieldCodec.encodeBytes(Map.of())).containsExactly(0, 0, 0, 0);
		assertThat(FieldCodec.decode(new byte[4])).isEmpty();
	}

	@Test
	void whatIsNotARecordIsRefused() {
		byte[] good = FieldCodec.encodeBytes(Map.of("a", new byte[] { 1, 2 }, "b", new byte[0]));
		for (int cut = 1; cut < good.length; cut++) {
			byte[] truncated = java.util.Arrays.copyOf(good, cut);
			assertThatIllegalArgumentException().as("cut at %d", cut).isThrownBy(() -> FieldCodec.decode(truncated));
		}
		assertThatIllegalArgumentException()
			.isThrownBy(() -> FieldCodec.decode("hello".getBytes(StandardCharsets.UTF_8)));
		assertThatIllegalArgumentException().isThrownBy(() -> FieldCodec.decode(raw(2, "b", "a")))
			.withMessageContaining("order");
		assertThatIllegalArgumentException().isThrownBy(() -> FieldCodec.decode(raw(2, "a", "a")));
		assertThatIllegalArgumentException().isThrownBy(() -> FieldCodec.decode(raw(1, "a", "b")))
			.withMessageContaining("after the last");
		assertThatIllegalArgumentException().isThrownBy(() -> FieldCodec.decode(raw(3, "a", "b")));
		assertThat(FieldCodec.decode(raw(2, "a", "b"))).containsOnlyKeys("a", "b");
	}

	@Test
	void anUpdateMergesOverTheCurrentFields() {
		byte[] current = FieldCodec.encodeBytes(Map.of("field0", bytes("old0"), "field1", bytes("old1")));
		Map<String, ByteIterator> update = new LinkedHashMap<>();
		update.put("field1", new StringByteIterator("new1"));
		update.put("field2", new StringByteIterator("new2"));
		TreeMap<String, byte[]> merged = FieldCodec.decode(FieldCodec.merge(current, update));
		assertThat(merged.keySet()).containsExactly("field0", "field1", "field2");
		assertThat(merged.get("field0")).isEqualTo(bytes("old0"));
		assertThat(merged.get("field1")).isEqualTo(bytes("new1"));
		assertThat(FieldCodec.decode(FieldCodec.merge(null, Map.of("x", new StringByteIterator("1")))))
			.containsOnlyKeys("x");
	}

	@Test
	void onlyTheFieldsAskedForAreCopied() {
		Map<String, ByteIterator> result = new HashMap<>();
		FieldCodec.copyInto(Map.of("a", bytes("1"), "b", bytes("2")), Set.of("b"), result);
		assertThat(result).containsOnlyKeys("b");
		assertThat(result.get("b").toArray()).isEqualTo(bytes("2"));
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * A record written by hand: a count, then the names in the order given, empty values.
	 */
	private static byte[] raw(int count, String... names) {
		java.nio.ByteBuffer out = java.nio.ByteBuffer.allocate(4 + names.length * 9);
		out.putInt(count);
		for (String name : names) {
			out.putInt(1).put(name.getBytes(StandardCharsets.UTF_8)).putInt(0);
		}
		return out.array();
	}

}
