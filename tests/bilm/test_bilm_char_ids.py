"""Character ids (docs/bilm.md, "Character ids")."""

import torch

from ner.bilm.char_ids import BOS_CHAR_IDS, EOS_CHAR_IDS, batch_to_ids, token_to_char_ids


def test_token_ids_are_shifted_bytes_between_word_markers():
    assert list(token_to_char_ids("cat")) == [259, 100, 98, 117, 260] + [261] * 45
    assert list(token_to_char_ids("<S>")) == list(BOS_CHAR_IDS) == [259, 257, 260] + [261] * 47
    assert list(token_to_char_ids("</S>")) == list(EOS_CHAR_IDS) == [259, 258, 260] + [261] * 47


def test_long_tokens_keep_their_first_48_bytes_even_inside_a_multibyte_char():
    token = "a" * 47 + "é"  # 49 bytes: the second byte of é is cut
    ids = token_to_char_ids(token)
    assert len(ids) == 50
    assert ids[48] == "é".encode()[0] + 1
    assert ids[49] == 260  # end of word, no room for padding


def test_batch_is_right_padded_with_zero_rows():
    ids = batch_to_ids([["a", "b"], [], ["c"]])
    assert ids.shape == (3, 2, 50)
    assert ids.dtype == torch.long
    assert (ids[1] == 0).all() and (ids[2, 1] == 0).all()
    assert ids[2, 0].tolist() == list(token_to_char_ids("c"))
    assert batch_to_ids([]).shape == (0, 0, 50)
