# SPDX-License-Identifier: Apache-2.0
"""The calls transformers, diffusers, accelerate and peft make into safetensors, re-expressed
here in our own code (nothing is copied from those projects), each checked to behave as the
reference package does: the same tensors, names, metadata, errors and sharing decisions."""

from collections import defaultdict

import pytest

torch = pytest.importorskip("torch")

from safetensors import SafetensorError, safe_open  # noqa: E402
from safetensors.torch import (  # noqa: E402
    _find_shared_tensors,
    _remove_duplicate_names,
    load_file,
    save_file,
    storage_ptr,
    storage_size,
)

ACCEPTED_FORMATS = ("pt", "tf", "flax", "mlx")  # what a loader of torch checkpoints accepts


class TinyLM(torch.nn.Module):
    """An embedding tied to the output projection, as language models tie them."""

    def __init__(self, vocab=32, hidden=8):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.proj = torch.nn.Linear(hidden, hidden)
        self.norm = torch.nn.LayerNorm(hidden)
        self.lm_head = torch.nn.Linear(hidden, vocab, bias=False)
        self.lm_head.weight = self.embed.weight


def storage_id(tensor):
    """How model libraries tell storages apart: device, storage address and size."""
    return tensor.device, storage_ptr(tensor), storage_size(tensor)


# --- transformers: save_pretrained / from_pretrained / tensor parallelism -------------------------


def save_pretrained_like(model, path):
    """Drops the tied duplicates (keeping the name the model prefers), then save_file with the
    format metadata a torch checkpoint carries."""
    state_dict = model.state_dict()
    by_storage = defaultdict(list)
    for name, tensor in state_dict.items():
        by_storage[storage_id(tensor)].append(name)
    shared = [names for names in by_storage.values() if len(names) > 1]
    dropped = []
    for names in shared:
        removals = _remove_duplicate_names({n: state_dict[n] for n in names}, preferred_names=["embed.weight"])
        for kept, gone in removals.items():
            dropped += gone
    for name in dropped:
        del state_dict[name]
    save_file(state_dict, path, metadata={"format": "pt"})
    return dropped


def from_pretrained_like(path):
    with safe_open(path, framework="pt") as f:
        metadata = f.metadata()
        if metadata is None or metadata.get("format") not in ACCEPTED_FORMATS:
            raise OSError("not a torch checkpoint")
        return {name: f.get_tensor(name) for name in f.keys()}


def test_transformers_save_and_load_of_a_tied_model(tmp_path):
    torch.manual_seed(0)
    model = TinyLM()
    path = tmp_path / "model.safetensors"
    assert save_pretrained_like(model, path) == ["lm_head.weight"]
    loaded = from_pretrained_like(path)
    assert sorted(loaded) == sorted(set(model.state_dict()) - {"lm_head.weight"})
    for name, tensor in loaded.items():
        assert torch.equal(tensor, model.state_dict()[name])
    # Saving the tied state dict as is is refused, with the reference's RuntimeError.
    with pytest.raises(RuntimeError, match="Some tensors share memory"):
        save_file(model.state_dict(), tmp_path / "tied.safetensors")
    # A checkpoint without format metadata is refused by the loader, as with the reference.
    save_file({"w": torch.zeros(2)}, tmp_path / "bare.safetensors")
    with safe_open(tmp_path / "bare.safetensors", framework="pt") as f:
        assert f.metadata() is None


def test_transformers_find_shared_tensors_groups_tied_weights():
    model = TinyLM()
    state_dict = model.state_dict()
    groups = [group for group in _find_shared_tensors(state_dict) if len(group) > 1]
    assert groups == [{"embed.weight", "lm_head.weight"}]
    # Every other tensor is a group of its own, and the groups cover the state dict.
    assert sorted(n for g in _find_shared_tensors(state_dict) for n in g) == sorted(state_dict)
    assert dict(_remove_duplicate_names(state_dict)) == {"embed.weight": ["lm_head.weight"]}
    assert dict(_remove_duplicate_names(state_dict, discard_names=["embed.weight"])) == {
        "lm_head.weight": ["embed.weight"]}


def rank_block(size, world, rank):
    block = (size + world - 1) // world
    return min(rank * block, size), min((rank + 1) * block, size)


def shard_of(param, world, rank, dim):
    """A rank's part of a tensor along `dim`, read through get_slice as a tensor-parallel
    loader does: only the rows (or columns) of that rank."""
    size = param.get_shape()[dim]
    start, stop = rank_block(size, world, rank)
    index = [slice(None)] * len(param.get_shape())
    index[dim] = slice(start, stop)
    return param[tuple(index)]


@pytest.mark.parametrize("world", [1, 2, 3, 4])
def test_transformers_tensor_parallel_get_slice_per_rank(tmp_path, world):
    torch.manual_seed(1)
    tensors = {"q.weight": torch.randn(12, 8), "o.weight": torch.randn(8, 12), "norm.weight": torch.randn(8)}
    path = tmp_path / "tp.safetensors"
    save_file(tensors, path, metadata={"format": "pt"})
    with safe_open(path, framework="pt", device="cpu") as f:
        for rank in range(world):
            column = shard_of(f.get_slice("q.weight"), world, rank, 0)
            row = shard_of(f.get_slice("o.weight"), world, rank, 1)
            assert torch.equal(column, torch.chunk(tensors["q.weight"], world, 0)[rank])
            assert torch.equal(row, torch.chunk(tensors["o.weight"], world, 1)[rank])
            assert torch.equal(f.get_slice("norm.weight")[:], tensors["norm.weight"])
        assert f.get_slice("q.weight").get_dtype() == "F32"
        # A loader that asks past the end gets main's error, not a silently short tensor.
        with pytest.raises(SafetensorError, match="index 12 out of bounds for tensor dimension #0 of size 12"):
            f.get_slice("q.weight")[12:16]


# --- diffusers: load_file(device=...) --------------------------------------------------------------


@pytest.mark.parametrize("device", ["cpu", torch.device("cpu")])
def test_diffusers_load_file_with_a_device(tmp_path, device):
    tensors = {"unet.conv.weight": torch.randn(4, 3, 3, 3), "unet.conv.bias": torch.zeros(4, dtype=torch.float16)}
    path = tmp_path / "diffusion_pytorch_model.safetensors"
    save_file(tensors, path)
    loaded = load_file(path, device=device)
    assert list(loaded) == list(tensors)  # file order: the order the tensors were saved in, by dtype
    for name, tensor in tensors.items():
        assert loaded[name].device.type == "cpu" and loaded[name].dtype == tensor.dtype
        assert torch.equal(loaded[name], tensor)
    with pytest.raises(SafetensorError, match="device bogus is invalid"):
        load_file(path, device="bogus")


# --- accelerate: safe_open per device of a device map; offloaded weights ---------------------------


def load_with_device_map(path, device_map):
    """Groups the file's tensors by the device the map gives their module, then opens the file
    once per device, as a big-model loader does."""
    with safe_open(path, framework="pt") as f:
        names = f.keys()
    by_device = defaultdict(list)
    for name in names:
        module = name.rsplit(".", 1)[0]
        by_device[device_map.get(module, "cpu")].append(name)
    out = {}
    for device, group in by_device.items():
        with safe_open(path, framework="pt", device=device) as f:
            for name in group:
                out[name] = f.get_tensor(name)
    return out


def test_accelerate_safe_open_per_device_and_offloaded_weights(tmp_path):
    torch.manual_seed(2)
    tensors = {f"layers.{i}.weight": torch.randn(4, 4) for i in range(3)}
    path = tmp_path / "model.safetensors"
    save_file(tensors, path, metadata={"format": "pt"})
    device_map = {"layers.0": "cpu", "layers.1": 0 if torch.cuda.is_available() else "cpu", "layers.2": "cpu"}
    loaded = load_with_device_map(path, device_map)
    assert sorted(loaded) == sorted(tensors)
    for name, tensor in tensors.items():
        assert torch.equal(loaded[name].cpu(), tensor)
    # Offloaded weights: an index names, per weight, the file and the name inside it.
    offload_dir = tmp_path / "offload"
    offload_dir.mkdir()
    save_file({"w": tensors["layers.2.weight"]}, offload_dir / "part.safetensors")
    index = {"layers.2.weight": {"safetensors_file": str(offload_dir / "part.safetensors"), "weight_name": "w"}}
    for key, info in index.items():
        with safe_open(info["safetensors_file"], framework="pt", device="cpu") as f:
            assert torch.equal(f.get_tensor(info.get("weight_name", key)), tensors[key])
    assert torch.equal(load_file(offload_dir / "part.safetensors")["w"], tensors["layers.2.weight"])


# --- peft: adapter weights saved without the adapter name, loaded back with it ---------------------


def test_peft_adapter_save_and_load_with_renamed_keys(tmp_path):
    torch.manual_seed(3)
    adapter = "default"
    state = {
        f"base_model.model.q.lora_A.{adapter}.weight": torch.randn(2, 8),
        f"base_model.model.q.lora_B.{adapter}.weight": torch.zeros(8, 2),
        f"base_model.model.v.lora_A.{adapter}.weight": torch.randn(2, 8),
    }
    state[f"base_model.model.v.lora_B.{adapter}.weight"] = state[f"base_model.model.q.lora_B.{adapter}.weight"]
    # Saving: the adapter name leaves the keys; tensors sharing storage are cloned first.
    to_save = {name.replace(f".{adapter}", ""): tensor for name, tensor in state.items()}
    by_storage = defaultdict(list)
    for name, tensor in to_save.items():
        by_storage[storage_id(tensor)].append(name)
    for names in by_storage.values():
        for name in names[1:]:
            to_save[name] = to_save[name].clone()
    path = tmp_path / "adapter_model.safetensors"
    save_file(to_save, path, metadata={"format": "pt"})
    # Loading: load_file on the device, then the adapter name goes back into every lora key.
    loaded = load_file(path, device="cpu")
    renamed = {}
    for name, tensor in loaded.items():
        for part in ("lora_A", "lora_B"):
            name = name.replace(f".{part}.", f".{part}.{adapter}.")
        renamed[name] = tensor
    assert sorted(renamed) == sorted(state)
    for name, tensor in state.items():
        assert torch.equal(renamed[name], tensor)
    with safe_open(path, framework="pt") as f:
        assert f.metadata() == {"format": "pt"}
