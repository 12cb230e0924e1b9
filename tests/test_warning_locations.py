"""Where a warning that PyTorch raises from its own Python code (``warnings.warn`` in torch/nn/functional.py,
modules/rnn.py, optim/..., utils/data/...) is attributed, and so how often it prints.

Python names the frame a warning's ``stacklevel`` selects, and its default filter prints a warning once per
location. PyTorch's ``stacklevel`` lands in its own files for some warnings (``nn.RNN(4, 4, dropout=0.5)``
names torch/nn/modules/rnn.py: two such layers print it once) and in the caller's line for others (two
``F.softmax(x)`` lines print it twice). gradiente's warnings must land in the same kind of place: in its own
analogous file, or in the same line of the user's program, even where its call depth differs from PyTorch's.

Each case is a small program, the same text for both libraries (``torch``, ``nn`` and ``F`` are given to it, so
it imports neither), that triggers a warning from two different lines. It runs in a subprocess per library, under
Python's default warning filters, each case with fresh registries (``catch_warnings`` and one more filter reset
them); ``showwarning``, which the filters call for each warning they let through (it prints it to stderr), records
it instead. The printed warnings must agree in number, order, category, message (``gradiente.Size`` read as
``torch.Size``) and place: the same line of the program, or the same file of the library, its path relative to
the package (a case maps PyTorch's path where gradiente's layout differs)."""
import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from typing import Optional

import pytest

pytest.importorskip("torch")

_RUNNER = r"""
import importlib, importlib.util, json, os, sys, traceback, warnings
name, program = sys.argv[1], os.path.abspath(sys.argv[2])
lib = importlib.import_module(name)
importlib.import_module(name + ".nn.functional")
if name == "torch":
    # PyTorch imports sympy on first use of some paths (multi-head attention's masks), and sympy's import adds a
    # warning filter, which empties every registry: a first-use accident, not where a warning is attributed
    if importlib.util.find_spec("sympy"):
        import sympy  # noqa: F401
else:
    sys.modules["torch"] = None     # a case that imports torch by mistake fails instead of testing PyTorch
root = os.path.dirname(os.path.abspath(lib.__file__)) + os.sep


def place(filename):
    filename = os.path.abspath(filename)
    if filename == program:
        return "user"
    if filename.startswith(root):
        return "library:" + filename[len(root):].replace(os.sep, "/")
    return "other:" + filename


results = {}
for case, source in json.load(sys.stdin):
    shown = []

    def show(message, category, filename, lineno, file=None, line=None):
        shown.append([category.__name__, str(message), place(filename), lineno])

    with warnings.catch_warnings():
        warnings.simplefilter("default", append=True)      # the default action: only resets the registries
        warnings.showwarning = show
        namespace = {"__name__": "__main__", "__file__": program, "torch": lib, "nn": lib.nn,
                     "F": lib.nn.functional}
        try:
            exec(compile(source, program, "exec"), namespace)
            error = None
        except Exception:
            error = traceback.format_exc()
    results[case] = {"shown": shown, "error": error}
print(json.dumps(results))
"""


@dataclass
class Case:
    name: str
    source: str
    files: dict = field(default_factory=dict)     # PyTorch's file -> gradiente's, where the layouts differ
    known: Optional[str] = None                   # a known difference: xfail(strict=True), the fix drops it
    setup: str = ""                               # lines before the source

    def __post_init__(self):
        self.source = textwrap.dedent(self.setup).lstrip("\n") + textwrap.dedent(self.source).lstrip("\n")


_MHA = """
    q = torch.ones(2, 1, 4)
    m = nn.MultiheadAttention(4, 2)
    bool_mask = torch.zeros(2, 2, dtype=torch.bool)
    float_padding = torch.zeros(1, 2)
"""
_MHA_ARGS = "(q, q, q, 4, 2, m.in_proj_weight, m.in_proj_bias, None, None, False, 0.0, m.out_proj.weight, " \
            "m.out_proj.bias)"
_SCHEDULER = """
    p = nn.Parameter(torch.ones(2))
    opt = torch.optim.SGD([p], lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, 1)
"""

CASES = [
    # --- nn.modules: the library's file ---
    Case("rnn_dropout", """
        r1 = nn.RNN(4, 4, dropout=0.5)
        r2 = nn.RNN(4, 4, dropout=0.5)
    """),
    Case("lstm_gru_dropout", """
        r1 = nn.LSTM(4, 4, dropout=0.5)
        r2 = nn.LSTM(4, 4, dropout=0.5)
        r3 = nn.GRU(4, 4, dropout=0.5)
    """),
    Case("loss_module_size_average", """
        a = nn.MSELoss(size_average=False)
        b = nn.L1Loss(size_average=False)
    """),
    Case("weighted_loss_module_reduce", """
        a = nn.NLLLoss(reduce=False)
        b = nn.CrossEntropyLoss(reduce=False)
    """),
    Case("softmax_module_implicit_dim", """
        x = torch.ones(2, 3)
        m = nn.Softmax()
        m(x)
        m(x)
        nn.LogSoftmax()(x)
        nn.Softmin()(x)
        nn.Sequential(nn.Softmax())(x)
    """),
    Case("dropout2d_module", """
        m = nn.Dropout2d()
        m(torch.ones(2, 3))
        m(torch.ones(2, 3))
        nn.Dropout2d()(torch.ones(2, 3, 4))
        nn.Dropout3d()(torch.ones(2, 3))
        nn.Dropout3d()(torch.ones(2, 3))
    """),
    Case("transformer_nested_tensor", """
        t1 = nn.Transformer(4, 2, 1, 1, 8)
        t2 = nn.Transformer(4, 2, 1, 1, 8)
    """),
    Case("target_size_loss_module", """
        x, t = torch.ones(2, 3), torch.ones(1, 3)
        m = nn.MSELoss()
        m(x, t)
        m(x, t)
        nn.L1Loss()(x, t)
        nn.SmoothL1Loss()(x, t)
        nn.HuberLoss()(x, t)
    """),
    Case("kl_div_mean_loss_module", """
        x = torch.ones(2, 3)
        m = nn.KLDivLoss()
        m(x, x)
        m(x, x)
    """),
    Case("mha_mismatched_masks_module", setup=_MHA, source="""
        m(q, q, q, attn_mask=bool_mask, key_padding_mask=float_padding)
        m(q, q, q, attn_mask=bool_mask, key_padding_mask=float_padding)
    """, files={"nn/modules/activation.py": "nn/modules/transformer.py"}),
    Case("instancenorm_num_features", """
        x = torch.ones(2, 3, 4)
        m = nn.InstanceNorm1d(5)
        m(x)
        m(x)
        nn.InstanceNorm1d(5)(x)
    """),
    Case("module_always_call_hook", """
        m = nn.Linear(2, 2)
        def failing(module, args, output):
            raise ValueError("hook")
        m.register_forward_hook(failing, always_call=True)
        for _ in range(2):
            try:
                m(torch.ones(3))
            except RuntimeError:
                pass
        try:
            m(torch.ones(3))
        except RuntimeError:
            pass
    """),
    Case("global_always_call_hook", """
        def failing(module, args, output):
            raise ValueError("hook")
        handle = nn.modules.module.register_module_forward_hook(failing, always_call=True)
        m = nn.Linear(2, 2)
        try:
            m(torch.ones(3))
        except RuntimeError:
            pass
        try:
            m(torch.ones(3))
        except RuntimeError:
            pass
        handle.remove()
    """),
    Case("non_full_backward_hook", """
        class TwoOutputs(nn.Module):
            def forward(self, x):
                return x * 2, x * 3
        m = TwoOutputs()
        m.register_backward_hook(lambda module, grad_input, grad_output: None)
        x = torch.ones(2, requires_grad=True)
        m(x)
        m(x)
    """),
    # --- nn.functional: the library's file when a module calls, the caller's line otherwise ---
    Case("functional_size_average", """
        x = torch.ones(3)
        F.mse_loss(x, x, size_average=False)
        F.l1_loss(x, x, size_average=False)
        F.mse_loss(x, x, size_average=False)
    """, files={"nn/functional.py": "ops/nn/losses.py"}),
    Case("functional_elementwise_mean", """
        x = torch.ones(3)
        F.l1_loss(x, x, reduction="elementwise_mean")
        F.l1_loss(x, x, reduction="elementwise_mean")
    """, files={"nn/functional.py": "ops/nn/losses.py"}),
    Case("softmax_implicit_dim", """
        x = torch.ones(2, 3)
        F.softmax(x)
        F.softmax(x)
        F.log_softmax(x)
        F.softmin(x)
    """),
    Case("dropout_nd_functional", """
        F.dropout2d(torch.ones(2, 3))
        F.dropout2d(torch.ones(2, 3))
        F.dropout2d(torch.ones(2, 3, 4))
        F.dropout2d(torch.ones(2, 3, 4))
        F.dropout3d(torch.ones(2, 3))
        F.dropout3d(torch.ones(2, 3))
    """),
    Case("upsample_deprecated", """
        x = torch.ones(1, 1, 2, 2)
        F.upsample(x, scale_factor=2)
        F.upsample(x, scale_factor=2)
        F.upsample_nearest(x, scale_factor=2)
        F.upsample_nearest(x, scale_factor=2)
        F.upsample_bilinear(x, scale_factor=2)
        F.upsample_bilinear(x, scale_factor=2)
    """),
    Case("gumbel_softmax_eps", """
        x = torch.ones(2, 3)
        F.gumbel_softmax(x, eps=1e-5)
        F.gumbel_softmax(x, eps=1e-5)
    """),
    Case("embedding_bag_argument_order", """
        w, i, o = torch.ones(10, 3), torch.tensor([1, 2, 3]), torch.tensor([0])
        F.embedding_bag(w, i, o)
        F.embedding_bag(w, i, o)
    """),
    Case("target_size_functional", """
        x, t = torch.ones(2, 3), torch.ones(1, 3)
        F.mse_loss(x, t)
        F.mse_loss(x, t)
        F.l1_loss(x, t)
        F.smooth_l1_loss(x, t)
        F.huber_loss(x, t)
    """),
    Case("grid_sample_align_corners", """
        x, grid, theta = torch.ones(1, 1, 2, 2), torch.zeros(1, 2, 2, 2), torch.eye(2, 3).unsqueeze(0)
        F.grid_sample(x, grid)
        F.grid_sample(x, grid)
        F.affine_grid(theta, (1, 1, 2, 2))
        F.affine_grid(theta, (1, 1, 2, 2))
        F.affine_grid(theta, (1, 1, 1, 2), align_corners=False)
        F.affine_grid(theta, (1, 1, 1, 2), align_corners=False)
    """),
    Case("kl_div_mean_functional", """
        x = torch.ones(2, 3)
        F.kl_div(x, x)
        F.kl_div(x, x)
    """),
    Case("mha_mismatched_masks_functional", setup=_MHA, source=f"""
        F.multi_head_attention_forward(*{_MHA_ARGS}, attn_mask=bool_mask, key_padding_mask=float_padding)
        F.multi_head_attention_forward(*{_MHA_ARGS}, attn_mask=bool_mask, key_padding_mask=float_padding)
    """, files={"nn/functional.py": "ops/nn/attention.py"}),
    Case("linear_cross_entropy_options_ignored", """
        x, w, t = torch.randn(4, 3), torch.randn(5, 3), torch.tensor([0, 1, 2, 3])
        F.linear_cross_entropy(x, w, t, label_smoothing=0.1, options=nn.LinearCrossEntropyOptions())
        F.linear_cross_entropy(x, w, t, label_smoothing=0.1, options=nn.LinearCrossEntropyOptions())
    """),
    # --- nn: the caller's line ---
    Case("transformer_encoder_nested_tensor", """
        layer = nn.TransformerEncoderLayer(4, 2, batch_first=False)
        e1 = nn.TransformerEncoder(layer, 1)
        e2 = nn.TransformerEncoder(layer, 1)
    """),
    Case("hardtanh_value_keywords", """
        nn.Hardtanh(min_value=-1.0)
        nn.Hardtanh(min_value=-1.0)
        nn.Hardtanh(max_value=1.0)
        nn.Hardtanh(max_value=1.0)
    """),
    Case("init_zero_element", """
        w = torch.empty(0, 3)
        nn.init.kaiming_uniform_(w)
        nn.init.kaiming_uniform_(w)
        nn.init.kaiming_normal_(w)
    """),
    Case("init_deprecated_names", """
        w = torch.empty(2, 3)
        nn.init.uniform(w)
        nn.init.uniform(w)
        nn.init.normal(w)
        nn.init.xavier_uniform(w)
    """),
    Case("clip_grad_norm_empty_generator", """
        nn.utils.clip_grad_norm_((p for p in []), 1.0)
        nn.utils.clip_grad_norm_((p for p in []), 1.0)
    """),
    Case("clip_grad_norm_deprecated", """
        p = nn.Parameter(torch.ones(2))
        nn.utils.clip_grad_norm([p], 1.0)
        nn.utils.clip_grad_norm([p], 1.0)
    """),
    Case("stateless_functional_call_deprecated", """
        m, x = nn.Linear(2, 2), torch.ones(2)
        nn.utils.stateless.functional_call(m, dict(m.named_parameters()), (x,))
        nn.utils.stateless.functional_call(m, dict(m.named_parameters()), (x,))
    """),
    Case("state_dict_positional_args", """
        m = nn.Linear(2, 2)
        m.state_dict({})
        m.state_dict({})
    """),
    Case("full_backward_hook_on_outputs", """
        m = nn.Linear(2, 2)
        m.register_full_backward_hook(lambda module, grad_input, grad_output: None)
        m(torch.ones(1, 2)).sum().backward()
        m(torch.ones(1, 2)).sum().backward()
    """),
    # --- nn: the library's own line ---
    Case("trunc_normal_far_mean", """
        w = torch.empty(3)
        nn.init.trunc_normal_(w, mean=10.0)
        nn.init.trunc_normal_(w, mean=10.0)
    """),
    Case("weight_norm_deprecated", """
        nn.utils.weight_norm(nn.Linear(2, 2))
        nn.utils.weight_norm(nn.Linear(2, 2))
    """),
    # --- optim ---
    Case("optimizer_duplicate_parameters", """
        p = nn.Parameter(torch.ones(2))
        torch.optim.SGD([p, p], lr=0.1)
        torch.optim.Adam([p, p], lr=0.1)
        opt = torch.optim.SGD([nn.Parameter(torch.ones(2))], lr=0.1)
        opt.add_param_group({"params": [p, p]})
    """, files={"_compile.py": "optim/optimizer.py"}),
    Case("scheduler_get_lr_outside_step", setup=_SCHEDULER, source="""
        sched.get_lr()
        sched.get_lr()
        torch.optim.lr_scheduler.ExponentialLR(opt, 0.5).get_lr()
    """),
    Case("scheduler_step_before_optimizer", setup=_SCHEDULER, source="""
        sched.step()
        opt2 = torch.optim.SGD([p], lr=0.1)
        torch.optim.lr_scheduler.StepLR(opt2, 1).step()
    """),
    Case("scheduler_optimizer_step_overridden", setup=_SCHEDULER, source="""
        opt.step = lambda: None
        sched.step()
        sched.step()
    """),
    Case("scheduler_epoch_argument", setup=_SCHEDULER, source="""
        opt.step()
        sched.step(1)
        sched.step(2)
        plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt)
        plateau.step(1.0, 1)
        plateau.step(1.0, 2)
    """),
    Case("swalr_get_lr_outside_step", """
        opt = torch.optim.SGD([nn.Parameter(torch.ones(2))], lr=0.1)
        sched = torch.optim.swa_utils.SWALR(opt, swa_lr=0.05)
        sched.get_lr()
        sched.get_lr()
    """),
    # --- utils.data, utils.checkpoint ---
    Case("random_split_empty_part", """
        g = torch.Generator().manual_seed(0)
        torch.utils.data.random_split(range(3), [0.0, 1.0], generator=g)
        torch.utils.data.random_split(range(3), [0.0, 1.0], generator=g)
    """),
    Case("dataloader_pin_memory", """
        loader = torch.utils.data.DataLoader([1, 2], pin_memory=True)
        iter(loader)
        iter(loader)
    """),
    Case("dataloader_too_many_workers", """
        loader1 = torch.utils.data.DataLoader([1, 2], num_workers=100000)
        loader2 = torch.utils.data.DataLoader([1, 2], num_workers=100000)
    """),
    Case("checkpoint_use_reentrant", """
        x = torch.ones(2, requires_grad=True)
        torch.utils.checkpoint.checkpoint(torch.sin, x)
        torch.utils.checkpoint.checkpoint(torch.sin, x)
    """, files={"_dynamo/eval_frame.py": "utils/checkpoint.py"}),
    Case("checkpoint_sequential_use_reentrant", """
        x = torch.ones(2, requires_grad=True)
        s = nn.Sequential(nn.Identity(), nn.Identity())
        torch.utils.checkpoint.checkpoint_sequential(s, 1, x)
        torch.utils.checkpoint.checkpoint_sequential(s, 1, x)
    """),
    Case("checkpoint_no_input_requires_grad", """
        x = torch.ones(2)
        torch.utils.checkpoint.checkpoint(torch.sin, x, use_reentrant=True)
        torch.utils.checkpoint.checkpoint(torch.sin, x, use_reentrant=True)
    """),
    # --- autograd ---
    Case("function_instantiated", """
        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2
        Double()
        Double()
    """),
    Case("gradcheck_not_double", """
        x = torch.ones(2, requires_grad=True)
        torch.autograd.gradcheck(torch.sin, (x,), eps=1e-3, atol=1e-2, rtol=1e-2)
        torch.autograd.gradcheck(torch.sin, (x,), eps=1e-3, atol=1e-2, rtol=1e-2)
        torch.autograd.gradgradcheck(torch.sin, (x,), eps=1e-3, atol=1e-2, rtol=1e-2)
    """),
    Case("gradcheck_undefined_grad", """
        def hook(grad):
            if grad is None:
                raise RuntimeError("undefined")
            return grad
        def f(x):
            y = x * 2
            y.register_hook(hook)
            return y
        x = torch.ones(2, dtype=torch.float64, requires_grad=True)
        for _ in range(2):
            try:
                torch.autograd.gradcheck(f, (x,))
            except RuntimeError:     # GradcheckError
                pass
        try:
            torch.autograd.gradcheck(f, (x,))
        except RuntimeError:
            pass
    """),
    Case("autograd_functions_type_deprecated", """
        import importlib
        Type = importlib.import_module(torch.__name__ + ".autograd._functions").Type
        x = torch.ones(2, requires_grad=True)
        Type.apply(x, torch.float64)
        Type.apply(x, torch.float64)
    """),
    Case("detect_anomaly", """
        torch.autograd.detect_anomaly()
        torch.autograd.detect_anomaly()
    """),
    Case("profiler_devices", """
        torch.autograd.profiler.profile(use_cuda=True)
        torch.autograd.profiler.profile(use_cuda=True)
        torch.autograd.profiler.profile(use_device="npx")
        torch.autograd.profiler.profile(use_device="npx")
        torch.autograd.profiler.profile(use_device="cuda")
        torch.autograd.profiler.profile(use_device="cuda")
    """),
    # --- distributions ---
    Case("distribution_without_arg_constraints", """
        class D(torch.distributions.Distribution):
            def __init__(self):
                super().__init__(validate_args=True)
        D()
        D()
    """),
    Case("distribution_without_support", """
        class D(torch.distributions.Distribution):
            arg_constraints = {}
            def __init__(self):
                super().__init__(validate_args=True)
            def log_prob(self, value):
                self._validate_sample(value)
                return value
        d = D()
        d.log_prob(torch.ones(1))
        d.log_prob(torch.ones(1))
    """),
    Case("kl_divergence_ambiguous", """
        Normal, kl = torch.distributions.Normal, torch.distributions.kl
        class A(Normal):
            pass
        class B(Normal):
            pass
        kl.register_kl(A, Normal)(lambda p, q: torch.zeros(1))
        kl.register_kl(Normal, B)(lambda p, q: torch.ones(1))
        kl.kl_divergence(A(0.0, 1.0), B(0.0, 1.0))
        kl.kl_divergence(A(0.0, 1.0), B(0.0, 1.0))
    """),
    Case("wishart_low_df", """
        torch.distributions.Wishart(torch.tensor(2.5), torch.eye(3))
        torch.distributions.Wishart(torch.tensor(2.5), torch.eye(3))
    """),
    Case("wishart_singular_sample", """
        w = torch.distributions.Wishart(torch.tensor(4.0), torch.eye(2))
        w.sample()
        w.sample()
        w.rsample()
        w.rsample()
    """),
    Case("sample_n_deprecated", """
        d = torch.distributions.Normal(0.0, 1.0)
        d.sample_n(2)
        d.sample_n(2)
    """),
]


def _run_all(lib, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    env.update(OMP_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, "-c", _RUNNER, lib, str(tmp_path / "user_program.py")],
                          input=json.dumps([(c.name, c.source) for c in CASES]), capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def shown(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("warning_locations")
    return {lib: _run_all(lib, tmp_path) for lib in ("torch", "gradiente")}


def _printed(result, files=None):
    """``(category, message, place)`` of each printed warning; place: ``("user", line)`` or ``("library",
    path)``, PyTorch's path read through ``files``."""
    assert result["error"] is None, result["error"]
    printed = []
    for category, message, where, line in result["shown"]:
        if where == "user":
            place = ("user", line)
        elif where.startswith("library:"):
            path = where[len("library:"):]
            place = ("library", (files or {}).get(path, path))
        else:
            place = ("other", where)
        printed.append((category, message.replace("gradiente.", "torch."), place))
    return printed


def test_the_cases_have_distinct_names():
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [
    pytest.param(c, id=c.name, marks=[pytest.mark.xfail(strict=True, reason=c.known)] if c.known else [])
    for c in CASES])
def test_warning_prints_where_and_as_often_as_with_torch(case, shown):
    theirs = _printed(shown["torch"][case.name], case.files)
    ours = _printed(shown["gradiente"][case.name])
    assert theirs, "the program does not trigger the warning with PyTorch"
    assert all(place[0] in ("user", "library") for _, _, place in theirs), theirs
    assert ours == theirs
