"""nbval starts a notebook's kernel again when it dies at start-up (see conftest.py at the root)."""

import nbval.kernel
import pytest


class FakeClient:
    def __init__(self, manager):
        self.manager = manager

    def start_channels(self):
        pass

    def stop_channels(self):
        pass

    def wait_for_ready(self, timeout):
        self.manager.starts.append(timeout)
        if len(self.manager.starts) <= self.manager.deaths:
            raise RuntimeError("Kernel died before replying to kernel_info")


def fake_kernel_manager(deaths):
    class FakeKernelManager:
        starts: list = []

        def __init__(self, **kwargs):
            self.deaths = deaths

        def start_kernel(self, **kwargs):
            pass

        def client(self):
            return FakeClient(self)

        def shutdown_kernel(self, **kwargs):
            pass

    FakeKernelManager.starts = []
    return FakeKernelManager


def test_a_kernel_that_dies_at_start_up_is_started_again(monkeypatch):
    manager = fake_kernel_manager(deaths=2)
    monkeypatch.setattr(nbval.kernel, "KernelManager", manager)
    km, kc = nbval.kernel.start_new_kernel(startup_timeout=5, kernel_name="python3")
    assert isinstance(km, manager) and len(manager.starts) == 3


def test_a_kernel_that_keeps_dying_is_reported(monkeypatch):
    manager = fake_kernel_manager(deaths=99)
    monkeypatch.setattr(nbval.kernel, "KernelManager", manager)
    with pytest.raises(RuntimeError, match="Kernel died"):
        nbval.kernel.start_new_kernel(startup_timeout=5, kernel_name="python3")
    assert len(manager.starts) == 3
