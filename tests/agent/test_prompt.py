"""The system prompt: the home's devices by floor and area, the paper's rules, a size budget."""

from __future__ import annotations

from agent.backends.twin import TwinBackend
from agent.prompt import build_prompt, system_prompt
from twin.homemaker import make_home


async def test_prompt_lists_every_device_under_its_floor_and_area() -> None:
    home = make_home(3, "studio")
    backend = TwinBackend(home)
    prompt = await system_prompt(backend, memory=["Likes warm light"], scene="Evening, raining")
    for entity_id, entry in home.entities.items():
        assert f"- {entity_id}: {entry.name}" in prompt
    floor = next(iter(home.floors.values()))
    area = next(iter(home.areas.values()))
    assert prompt.index(f"## {floor.name}") < prompt.index(
        f"### {area.name} (area_id {area.area_id})"
    )
    assert "- Likes warm light" in prompt
    assert "Evening, raining" in prompt
    assert "several valid interpretations" in prompt
    assert "describe" in prompt
    assert "pyexec" in prompt


async def test_memory_scene_and_pyexec_appear_only_when_given() -> None:
    prompt = await system_prompt(TwinBackend(make_home(3, "studio"), pyexec=False))
    assert "pyexec" not in prompt
    assert "What you know about the user" not in prompt
    assert "The situation now" not in prompt


async def test_layout_covers_every_entity_once() -> None:
    home = make_home(3, "villa")
    layout = await TwinBackend(home).layout()
    listed = [e for floor in layout for area in floor.areas for e, _ in area.entities]
    assert sorted(listed) == sorted(home.entities)
    levels = [home.floors[floor.floor_id].level for floor in layout if floor.floor_id]
    assert levels == sorted(levels)


async def test_large_home_is_summarised_to_fit_the_budget() -> None:
    home = make_home(3, "villa")
    backend = TwinBackend(home)
    full = await system_prompt(backend, max_chars=10**6)
    assert all(entity_id in full for entity_id in home.entities)
    small = await system_prompt(backend, max_chars=len(full) - 1)
    assert len(small) < len(full)
    assert not any(f"- {entity_id}:" in small for entity_id in home.entities)
    tiny = await system_prompt(backend, max_chars=3000)
    assert len(tiny) <= 3000
    assert all(floor.name in tiny for floor in home.floors.values())
    assert "list_entities with an area" in tiny
    assert await system_prompt(backend, max_chars=3000) == tiny


async def test_an_impossible_budget_gives_the_coarsest_summary() -> None:
    home = make_home(3, "villa")
    backend = TwinBackend(home)
    prompt = build_prompt(await backend.layout(), await backend.states(), max_chars=10)
    lights = sum(1 for entity_id in home.entities if entity_id.startswith("light."))
    assert "The whole home" in prompt
    assert f", {lights} light," in prompt
