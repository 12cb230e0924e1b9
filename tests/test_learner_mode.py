"""Learner mode: off by default and silent then; on, each classic mistake warns once, in English or Spanish, where
it happens, and a correct training loop warns about nothing."""
import warnings

import pytest
import torch as reference

import gradiente as torch
from gradiente import LearnerWarning
from gradiente.core import diagnostics


def _run(program, lang="en", on=True):
    """Run ``program`` (with learner mode on in ``lang``, or off); returns the LearnerWarnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if on:
            with torch.learner_mode(lang=lang):
                program(torch)
        else:
            program(torch)
    return [w for w in caught if issubclass(w.category, LearnerWarning)]


def _model(lib, dropout=True):
    lib.manual_seed(0)
    layers = [lib.nn.Linear(3, 4), lib.nn.ReLU()] + ([lib.nn.Dropout(0.5)] if dropout else []) + [lib.nn.Linear(4, 1)]
    return lib.nn.Sequential(*layers)


def correct_training_loop(lib):
    model = _model(lib)
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    x, y = lib.randn(8, 3), lib.randn(8, 1)
    total = 0.0
    for _ in range(4):
        model.train()
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        total += loss.item()
        model.eval()
        with lib.no_grad():
            model(x)
    w = lib.zeros(3, requires_grad=True)        # the update by hand, as the notebooks do it
    for _ in range(3):
        loss = ((x @ w) ** 2).sum()
        loss.backward()
        with lib.no_grad():
            w -= 0.01 * w.grad
            w.grad.zero_()


def no_zero_grad(lib):
    w = lib.ones(3, requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1)
    for _ in range(3):
        loss = (w * w).sum()
        loss.backward()
        opt.step()      # the line warned about


def running_total(lib):
    w = lib.ones(3, requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1)
    total = 0
    for _ in range(3):
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        opt.step()
        total += loss   # the line warned about


def training_in_eval(lib):
    model = _model(lib)
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    model.eval()
    for _ in range(2):
        opt.zero_grad()
        ((model(lib.randn(8, 3)) - 1) ** 2).mean().backward()
        opt.step()      # the line warned about


def evaluating_in_train(lib):
    model = _model(lib)
    with lib.no_grad():
        for _ in range(2):
            model(lib.randn(8, 3))      # the line warned about (Dropout runs here, in train mode)


def data_during_training(lib):
    w = lib.ones(3, requires_grad=True)
    for _ in range(2):
        (w * w).sum().backward()
        w.data -= 0.1 * w.grad          # the line warned about
        w.grad = None


def requires_grad_on_a_computed_tensor(lib):
    w = lib.randn(3, requires_grad=True) * 0.1
    w.requires_grad_()                  # the line warned about


MISTAKES = {
    no_zero_grad: ("opt.step()", "were not reset since the previous step: w.grad",
                   "no se reiniciaron desde el paso anterior: w.grad"),
    running_total: ("total += loss", "`total += loss` adds a tensor that still carries its graph",
                    "`total += loss` suma a un total acumulado un tensor"),
    training_in_eval: ("opt.step()", "Dropout was in eval mode", "Dropout estaba en modo evaluación"),
    evaluating_in_train: ("model(lib.randn(8, 3))", "Dropout ran in training mode under no_grad",
                          "Dropout se ejecutó en modo entrenamiento dentro de no_grad"),
    data_during_training: ("w.data -= 0.1 * w.grad", "w was changed through .data after training began",
                           "w se modificó a través de .data después de empezar a entrenar"),
    requires_grad_on_a_computed_tensor: ("w.requires_grad_()", "w.requires_grad_() changes nothing",
                                         "w.requires_grad_() no cambia nada"),
}
HEADINGS = {"en": ("Why it matters: ", "Fix: "), "es": ("Por qué importa: ", "Solución: ")}


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("mistake", list(MISTAKES), ids=lambda f: f.__name__)
def test_each_mistake_warns_once_where_it_happens(mistake, lang):
    line, *texts = MISTAKES[mistake]
    given = _run(mistake, lang)
    assert len(given) == 1, [str(w.message) for w in given]
    warning = given[0]
    assert warning.filename == __file__
    with open(__file__) as source:
        assert source.read().splitlines()[warning.lineno - 1].strip().startswith(line)
    message = str(warning.message)
    assert texts[0 if lang == "en" else 1] in message
    why, fix = HEADINGS[lang]
    assert f"\n  {why}" in message and f"\n  {fix}" in message        # what happened, why it matters, the fix


@pytest.mark.parametrize("mistake", list(MISTAKES), ids=lambda f: f.__name__)
def test_off_by_default_and_silent(mistake):
    assert not torch.is_learner_mode_enabled()
    assert _run(mistake, on=False) == []
    assert not diagnostics.state.sites and diagnostics.state.learner is None


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_correct_training_loop_gives_no_warning(lang):
    assert _run(correct_training_loop, lang) == []


def test_the_same_program_computes_the_same_with_the_mode_on():
    def train(lib):
        model = _model(lib, dropout=False)
        opt = lib.optim.Adam(model.parameters(), lr=0.01)
        x = lib.randn(8, 3)
        for _ in range(3):
            opt.zero_grad()
            (model(x) ** 2).mean().backward()
            opt.step()
        return [p.detach().clone() for p in model.parameters()]
    off = train(torch)
    with torch.learner_mode():
        on = train(torch)
    assert all(torch.equal(a, b) for a, b in zip(off, on))


def _error(lib, program):
    with pytest.raises(RuntimeError) as info:
        program(lib)
    return str(info.value)


def non_scalar(lib):
    x = lib.ones(3, requires_grad=True)
    y = x * 2
    y.backward()


def twice(lib):
    x = lib.ones(3, requires_grad=True)
    y = x.exp().sum()
    y.backward()
    y.backward()


def flag_on_computed(lib):
    x = lib.ones(3, requires_grad=True)
    y = x * 2
    y.requires_grad = True


EXPLAINED = {
    non_scalar: ("y has shape [3]: 3 numbers, not one", "y tiene forma [3]: 3 números, no uno"),
    twice: ("this graph was already used by a backward() (at", "este grafo ya lo usó un backward() (en"),
    flag_on_computed: ("y was computed from other tensors (grad_fn=MulBackward0)",
                       "y se calculó a partir de otros tensores (grad_fn=MulBackward0)"),
}


@pytest.mark.parametrize("program", list(EXPLAINED), ids=lambda f: f.__name__)
def test_pytorchs_errors_keep_their_message_and_gain_an_explanation(program):
    pytorchs = _error(reference, program)
    assert _error(torch, program) == pytorchs or program is flag_on_computed     # (see below)
    for lang, heading in (("en", "Learner mode: "), ("es", "Modo aprendiz: ")):
        with torch.learner_mode(lang=lang):
            message = _error(torch, program)
        ours = _error(torch, program)
        assert message.startswith(ours + f"\n\n{heading}")
        assert EXPLAINED[program][0 if lang == "en" else 1] in message


def test_setting_requires_grad_on_a_computed_tensor_raises_as_pytorch():
    assert _error(torch, flag_on_computed).startswith(_error(reference, flag_on_computed))


def test_the_mode_as_a_function_and_as_a_context_manager():
    assert not torch.is_learner_mode_enabled()
    with torch.learner_mode(lang="es"):
        assert torch.is_learner_mode_enabled() and diagnostics.state.learner.lang == "es"
        with torch.learner_mode(enabled=False):
            assert not torch.is_learner_mode_enabled()
        assert diagnostics.state.learner.lang == "es"
    assert not torch.is_learner_mode_enabled() and not diagnostics.state.sites
    torch.learner_mode()
    try:
        assert torch.is_learner_mode_enabled()
    finally:
        torch.learner_mode(enabled=False)
    assert not torch.is_learner_mode_enabled()
    with pytest.raises(ValueError, match="lang must be one of en, es"):
        torch.learner_mode(lang="fr")


def test_anomaly_mode_and_learner_mode_share_the_recording():
    with torch.learner_mode():
        torch.autograd.set_detect_anomaly(True)
        torch.autograd.set_detect_anomaly(False)
        assert diagnostics.state.sites          # learner mode still asks for call sites
    assert not diagnostics.state.sites


def test_global_optimizer_step_hooks_as_pytorch():
    from gradiente.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook
    calls = []
    w = torch.ones(2, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    opt.register_step_pre_hook(lambda *a: calls.append("own pre"))
    opt.register_step_post_hook(lambda *a: calls.append("own post"))
    pre = register_optimizer_step_pre_hook(lambda *a: calls.append("global pre"))
    post = register_optimizer_step_post_hook(lambda *a: calls.append("global post"))
    opt.step()
    pre.remove()
    post.remove()
    opt.step()
    assert calls == ["global pre", "own pre", "own post", "global post", "own pre", "own post"]
