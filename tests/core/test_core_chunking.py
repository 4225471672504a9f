from bot.chunking import split_text


def _joined_without_added_fences(chunks: list[str]) -> str:
    return "\n".join(chunks)


def test_short_text_is_one_chunk() -> None:
    assert split_text("hello", 2000) == ["hello"]


def test_splits_on_lines_within_limit_and_keeps_every_line() -> None:
    lines = [f"line {i} " + "x" * 60 for i in range(200)]
    chunks = split_text("\n".join(lines), 2000)
    assert all(len(c) <= 2000 for c in chunks)
    joined = _joined_without_added_fences(chunks)
    assert all(line in joined for line in lines)


def test_code_fence_is_closed_and_reopened_across_chunks() -> None:
    code = "\n".join(f"value_{i} = {i}" + "#" * 40 for i in range(150))
    text = "Intro\n```python\n" + code + "\n```\nOutro"
    chunks = split_text(text, 2000)
    assert len(chunks) > 2
    for chunk in chunks:
        assert len(chunk) <= 2000
        assert chunk.count("```") % 2 == 0, chunk[:80]
    assert chunks[1].startswith("```python")


def test_a_single_huge_line_is_hard_split() -> None:
    chunks = split_text("y" * 5000, 2000)
    assert all(len(c) <= 2000 for c in chunks) and "".join(chunks) == "y" * 5000


def test_a_fence_opened_at_the_edge_leaves_room_to_close_it() -> None:
    # Found by the property test: the opening line fitted, its closing marker did not.
    chunks = split_text("0000000000000000\n```\n", 20)
    assert all(len(c) <= 20 for c in chunks)
