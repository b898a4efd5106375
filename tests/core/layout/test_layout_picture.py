"""The layout picture without Qt: a blocked tag's padded channels are marked in both panes."""

import numpy as np

from explorer.core.layout.picture import GAP, PAD_A, PAD_B, build_picture, dim_names
from explorer.core.layout.tags import layout_from_tag


def test_nchw16c_with_17_channels_marks_the_15_padded_channels():
    lay = layout_from_tag("aBcd16b", (2, 17, 5, 4))  # nChw16c: 17 channels stored as 32
    pic = build_picture(lay)
    assert dim_names(lay) == "nchw" and pic.colour_dim == 1

    # Logical pane: image 0, one 5x4 plane per channel, the 15 ghost channels all padding.
    real = (pic.log_off >= 0) & ~pic.log_pad
    assert pic.log_pad.sum() == (32 - 17) * 5 * 4 and real.sum() == 17 * 5 * 4
    assert (pic.log_idx[pic.log_pad][:, 1] >= 17).all() and (pic.log_idx[real][:, 1] < 17).all()
    assert np.isin(pic.log_img[pic.log_pad], (PAD_A, PAD_B)).all()
    assert (pic.log_img[real] == pic.log_idx[real][:, 1] % 20).all()

    # Physical pane: image 0's whole padded buffer, runs of 16; channel c % 16 >= 1 of the second block is padding.
    assert pic.phys_count == 32 * 5 * 4 and pic.phys_total == 2 * 32 * 5 * 4 and pic.phys_geom["run"] == 16
    offs = np.arange(pic.phys_count)
    assert np.array_equal(pic.phys_valid, ~((offs >= 16 * 5 * 4) & (offs % 16 >= 1)))
    drawn = pic.phys_off >= 0
    pad_cells = drawn & ~pic.phys_valid[np.where(drawn, pic.phys_off, 0)]
    assert pad_cells.sum() == 15 * 5 * 4 and np.isin(pic.phys_img[pad_cells], (PAD_A, PAD_B)).all()
    assert (pic.phys_img[~drawn] == GAP).all()

    # Both panes find the same element: the last real channel of row 2, column 3.
    off = lay.offset((0, 16, 2, 3))
    x, y = pic.logical_cell_of_offset(off)
    assert pic.logical_at(x, y) == (off, (0, 16, 2, 3), False)
    px, py = pic.physical_cell_of_offset(off)
    assert pic.physical_offset_at(px, py) == off
