"""KV401 context-beyond-sliding-window: an advertised context longer than the layers can see."""

from __future__ import annotations

from collections.abc import Iterator

from kvlint.deployment import Deployment
from kvlint.finding import Problem
from kvlint.finding import Severity
from kvlint.model.spec import CacheKind
from kvlint.rule import FixAvailability
from kvlint.rule import Rule
from kvlint.sizing import Sizing

from . import _numbers as n


class ContextBeyondSlidingWindow(Rule):
    """## What it does
    Checks an advertised context against the model's attention window. The context is a
    plan's `context` claim, or `max_model_len`. When every layer is windowed (Mistral 7B v0.1:
    4096 tokens in all 32 layers) a longer context is a warning; on a hybrid model whose
    local layers see a window and whose global layers see everything, an info finding says
    what the local layers miss.

    ## Why is this bad?
    A sliding-window layer keeps keys and values for the last W tokens only. On a model
    whose every layer is windowed, nothing attends directly to a token more than W back:
    the cache stops growing, which looks like cheap long context, but recall of early detail
    falls away. Advertising 32k on a 4k-window model promises a capability the architecture
    does not have.

    ## Example
    ```yaml
    model: mistralai/Mistral-7B-v0.1
    max-model-len: 32768
    ```

    Use instead:
    ```yaml
    model: mistralai/Mistral-7B-v0.1
    max-model-len: 4096
    ```

    ## Fix safety
    Lowering the advertised context changes what the service accepts, so the fix is unsafe.
    """

    code = "KV401"
    name = "context-beyond-sliding-window"
    severity = Severity.WARNING
    fix_availability = FixAvailability.SOMETIMES

    def check(self, dep: Deployment, sizing: Sizing) -> Iterator[Problem]:
        spec = sizing.spec
        if spec is None:
            return
        claim, label = dep.claims.context, "`context`"
        written = n.settled(sizing).max_model_len
        if claim is None and n.explicit(written):
            claim, label = written, n.name(sizing, "max_model_len")
        if claim is None:
            return
        # Each distinct layer once (a model repeats a few shapes), in order of first use.
        local = [
            (layer, count)
            for layer, count in spec.layer_shapes
            if layer.kind.bounded and layer.window
        ]
        if not local:
            return
        window = max(layer.window or 0 for layer, _ in local)
        windowed = sum(count for _, count in local)
        context = int(claim.value)
        if context <= window:
            return
        model = n.model_name(spec)
        kind = "chunked-attention" if local[0][0].kind is CacheKind.CHUNKED else "sliding-window"
        numbers = (
            ("context", str(context)),
            ("window", str(window)),
            (f"{kind} layers", f"{windowed} of {spec.num_layers}"),
        )
        if spec.every_layer_windowed:
            message = (
                f"{label} {context} is longer than the {window}-token sliding window of "
                f"{model}: each of its {windowed} layers attends to the last {window} tokens "
                f"only, so earlier tokens reach it only indirectly through the layers below"
            )
            fix = n.fix(f"Lower {label} to {window}", claim, str(window))
            yield Problem(claim.span, message, fix, numbers)
            return
        full = sum(count for layer, count in spec.layer_shapes if layer.kind.grows)
        message = (
            f"{label} {context}: {windowed} of the {spec.num_layers} layers of {model} are "
            f"{kind} layers that see only the last {window} tokens; only its {full} "
            f"full-attention layers attend to the whole context"
        )
        yield Problem(claim.span, message, None, numbers, Severity.INFO)
