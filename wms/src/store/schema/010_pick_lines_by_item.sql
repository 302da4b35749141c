-- A pick scan reads the lines of one item in one wave in walking order, and
-- sums what is left in the wave and in the order; without these indexes
-- both walked every line of the wave through the table.
CREATE INDEX pick_lines_by_wave_item ON pick_lines (wave_id, item_id, seq);
CREATE INDEX pick_lines_left ON pick_lines (wave_id, order_id, quantity, picked);
