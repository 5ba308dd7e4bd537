"""Real-library workloads for the what-if evidence (docs/whatif.md, "Measured against re-runs"):
random-initialised models from configs (no downloads, HF_HUB_OFFLINE=1), each in two phases
with `between_phases()` between them, run under the capture kit
(scripts/device/record_real_libs.sh: python3 -m reservoir.capture --out DIR --tag T -- real_libs.py W V).

  python3 real_libs.py WORKLOAD VARIANT
WORKLOAD: llama (transformers Llama: training with gradient checkpointing, then generate with a
KV cache), lora (PEFT LoRA on Llama, then generate), trainer (transformers Trainer, then
evaluate), lightning (Lightning Trainer.fit, then predict), vit (timm ViT train, then eval),
resnet (torchvision ResNet-50 with AMP, then eval), compile (torch.compile with CUDA graphs,
train then eval), fsdp is the capture kit's own example (python/examples/train_fsdp.py).
VARIANT: base; cleanup (gc.collect(); torch.cuda.empty_cache() in between_phases); any other
variant is the same program as base, its settings given by the caller (PYTORCH_CUDA_ALLOC_CONF,
RESERVOIR_FRACTION for set_per_process_memory_fraction at start).
So base with `--cleanup before:real_libs.py:second_phase` predicts cleanup, and base with
`--set`/`--fraction` predicts the others.
"""

import gc
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402

CLEANUP = False


def between_phases():
    gc.collect()
    if CLEANUP:
        torch.cuda.empty_cache()


def tokens(batch, seq, vocab, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randint(0, vocab, (batch, seq), device="cuda", generator=g)


# --- transformers Llama: train with gradient checkpointing, then generate with a KV cache

def llama_model(layers=6, hidden=1024, vocab=32000):
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=hidden * 11 // 4, num_hidden_layers=layers,
                      num_attention_heads=16, num_key_value_heads=8, max_position_embeddings=4096)
    torch.manual_seed(0)
    return LlamaForCausalLM(cfg).to("cuda", dtype=torch.bfloat16)


def first_phase_llama(model, steps=3, batch=4, seq=1024):
    model.gradient_checkpointing_enable()
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step in range(steps):
        ids = tokens(batch, seq, model.config.vocab_size, step)
        out = model(input_ids=ids, labels=ids)
        out.loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    del opt, out, ids


def second_phase_llama(model, batch=8, prompt=256, new=64):
    model.eval()
    model.gradient_checkpointing_disable()
    with torch.no_grad():
        ids = tokens(batch, prompt, model.config.vocab_size, 99)
        out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=new, do_sample=False,
                             use_cache=True, pad_token_id=0)
    return out.shape


def run_llama():
    model = llama_model()
    first_phase(lambda: first_phase_llama(model))
    between_phases()
    second_phase(lambda: second_phase_llama(model))


def run_lora():
    from peft import LoraConfig, get_peft_model

    model = get_peft_model(llama_model(layers=4), LoraConfig(r=16, lora_alpha=32, target_modules=["q_proj", "v_proj"]))
    first_phase(lambda: first_phase_llama(model, steps=3, batch=4, seq=768))
    between_phases()
    second_phase(lambda: second_phase_llama(model, batch=8, prompt=192, new=48))


# --- transformers Trainer

class RandomTokens(torch.utils.data.Dataset):
    def __init__(self, n, seq, vocab):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, vocab, (n, seq), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def run_trainer():
    from transformers import Trainer, TrainingArguments

    model = llama_model(layers=4, hidden=768)
    args = TrainingArguments(output_dir="/tmp/real_libs_trainer", per_device_train_batch_size=4, max_steps=4,
                             per_device_eval_batch_size=8, bf16=True, report_to=[], save_strategy="no",
                             logging_strategy="no", dataloader_num_workers=0, disable_tqdm=True)
    data = RandomTokens(64, 512, model.config.vocab_size)
    trainer = Trainer(model=model, args=args, train_dataset=data, eval_dataset=RandomTokens(32, 512, model.config.vocab_size))
    first_phase(trainer.train)
    between_phases()
    second_phase(trainer.evaluate)


# --- Lightning

def run_lightning():
    import lightning as L

    class Module(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(2048, 8192), torch.nn.GELU(),
                                                                 torch.nn.Linear(8192, 2048)) for _ in range(4)])

        def training_step(self, batch, _):
            return self.net(batch[0]).square().mean()

        def predict_step(self, batch, _):
            return self.net(batch[0]).sum()

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=1e-4)

    torch.manual_seed(0)
    data = torch.utils.data.TensorDataset(torch.randn(64 * 6, 2048))
    loader = torch.utils.data.DataLoader(data, batch_size=64)
    module = Module()
    trainer = L.Trainer(accelerator="cuda", devices=1, max_steps=5, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False)
    first_phase(lambda: trainer.fit(module, loader))
    between_phases()
    second_phase(lambda: trainer.predict(module, torch.utils.data.DataLoader(data, batch_size=128)))


# --- timm ViT, torchvision ResNet-50 (AMP)

def train_eval(model, make_batch, steps, amp):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda", enabled=amp)

    def train():
        model.train()
        for step in range(steps):
            x, y = make_batch(step)
            with torch.autocast("cuda", dtype=torch.float16, enabled=amp):
                loss = torch.nn.functional.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            opt.zero_grad(set_to_none=True)

    def evaluate():
        model.eval()
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16, enabled=amp):
            for step in range(2):
                x, _ = make_batch(100 + step)
                model(torch.cat([x, x]))

    first_phase(train)
    del opt
    between_phases()
    second_phase(evaluate)


def images(batch, classes):
    def make(step):
        g = torch.Generator(device="cuda").manual_seed(step)
        return (torch.randn(batch, 3, 224, 224, device="cuda", generator=g),
                torch.randint(0, classes, (batch,), device="cuda", generator=g))
    return make


def run_vit():
    import timm

    torch.manual_seed(0)
    model = timm.create_model("vit_small_patch16_224", pretrained=False, num_classes=1000).cuda()
    train_eval(model, images(64, 1000), steps=3, amp=False)


def run_resnet():
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.resnet50(weights=None).cuda()
    train_eval(model, images(64, 1000), steps=3, amp=True)


def run_compile():
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(),
                                                      torch.nn.Linear(4096, 1024)) for _ in range(4)]).cuda()
    compiled = torch.compile(model, mode="reduce-overhead")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def train():
        for step in range(4):
            x = torch.randn(256, 1024, device="cuda")
            compiled(x).square().mean().backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

    def evaluate():
        with torch.no_grad():
            for _ in range(3):
                compiled(torch.randn(256, 1024, device="cuda")).sum()

    first_phase(train)
    between_phases()
    second_phase(evaluate)


# The two phases are functions of their own, so that points can name them.
def first_phase(fn):
    fn()
    torch.cuda.synchronize()


def second_phase(fn):
    fn()
    torch.cuda.synchronize()


WORKLOADS = {"llama": run_llama, "lora": run_lora, "trainer": run_trainer, "lightning": run_lightning, "vit": run_vit,
             "resnet": run_resnet, "compile": run_compile}


def main():
    global CLEANUP
    workload, variant = sys.argv[1], sys.argv[2]
    CLEANUP = variant.startswith("cleanup")
    fraction = os.environ.get("RESERVOIR_FRACTION")
    if fraction:
        torch.cuda.set_per_process_memory_fraction(float(fraction))
    WORKLOADS[workload]()
    print(f"{workload} {variant}: peak reserved {torch.cuda.max_memory_reserved()}, "
          f"reserved {torch.cuda.memory_reserved()}, settings {os.environ.get('PYTORCH_CUDA_ALLOC_CONF', '')!r}, "
          f"fraction {fraction or 1}")


if __name__ == "__main__":
    main()
