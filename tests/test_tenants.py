"""A conversation's or person's address: workspace and the platform's own id (bot/core/tenants.py)."""

from bot.core.tenants import local_id, qualify, split, tenant_of


def test_a_single_workspace_address_is_the_bare_id():
    assert qualify(None, "C0456") == "C0456"
    assert qualify("", "C0456") == "C0456"
    assert split("C0456") == (None, "C0456")


def test_a_workspace_address_round_trips():
    address = qualify("T0123", "C0456")
    assert address == "T0123/C0456"
    assert split(address) == ("T0123", "C0456")
    assert tenant_of(address) == "T0123"
    assert local_id(address) == "C0456"


def test_two_workspaces_never_share_an_address():
    assert qualify("T1", "C9") != qualify("T2", "C9")
