package io.quorumkv.service.ops;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A plain-text table with aligned columns, as the {@code qkv} script prints it: a header
 * row, then one row per line, columns separated by two spaces.
 */
final class TextTable {

	private final List<String[]> rows = new ArrayList<>();

	TextTable(String... header) {
		this.rows.add(header);
	}

	TextTable row(Object... cells) {
		this.rows
			.add(Arrays.stream(cells).map((cell) -> (cell != null) ? cell.toString() : "-").toArray(String[]::new));
		return this;
	}

	@Override
	public String toString() {
		int columns = this.rows.stream().mapToInt((row) -> row.length).max().orElse(0);
		int[] widths = new int[columns];
		for (String[] row : this.rows) {
			for (int i = 0; i < row.length; i++) {
				widths[i] = Math.max(widths[i], row[i].length());
			}
		}
		StringBuilder text = new StringBuilder();
		for (String[] row : this.rows) {
			StringBuilder line = new StringBuilder();
			for (int i = 0; i < row.length; i++) {
				line.append(row[i]);
				if (i < row.length - 1) {
					line.append(" ".repeat(widths[i] - row[i].length() + 2));
				}
			}
			text.append(line.toString().stripTrailing()).append('\n');
		}
		return text.toString();
	}

}
