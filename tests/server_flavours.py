"""How each common local server tells (or hides) the model's context window, for the scripted
server (`ScriptedServer(flavour=..., context_window=N)`). The shapes are the servers' own, from
their documentation and source:

- "llama.cpp" (llama-server): `GET /props` → `default_generation_settings.n_ctx` (the window
  per slot); `/v1/models` says `owned_by: "llamacpp"` and `meta.n_ctx_train`, the length the
  model was trained for (not the window). A prompt over the window: 400
  `exceed_context_size_error`.
- "llama-cpp-python" (`python -m llama_cpp.server`): no `/props` (FastAPI's 404), `/v1/models`
  says `owned_by: "me"` and nothing else; a prompt of `n_ctx` tokens or more fails before any
  decoding: non-streamed a 400 `context_length_exceeded` ("This model's maximum context length
  is N tokens..."), streamed the event stream has started, so it is cut. `max_tokens` is lowered
  to what the window leaves, so a reply is cut with "length" there.
- "vllm": `/v1/models` entries carry `max_model_len`; a prompt over it: 400 with OpenAI's words.
- "lmstudio": `GET /api/v0/models` lists every downloaded model with `max_context_length` (the
  model's maximum) and, once loaded, `loaded_context_length` (what it serves); `/v1/models`
  says `owned_by: "organization_owner"`.
- "ollama": `GET /api/version`; `POST /api/show` → `parameters` ("num_ctx 8192\\n...", only when
  a Modelfile sets it) and `model_info` ("<arch>.context_length": the training length);
  `GET /api/ps` → loaded models with their `context_length`. A prompt over `num_ctx` is cut
  silently: the reply comes as usual.

`loaded=False` (lmstudio, ollama): the model is not in memory yet, so the server says only what
it would load it with; `modelfile_num_ctx=False` (ollama): no Modelfile sets `num_ctx`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FLAVOURS = ("llama.cpp", "llama-cpp-python", "vllm", "lmstudio", "ollama")
TRAINED = 131_072  # the model's training length the servers report beside (or instead of) it
NOT_FOUND = (404, {"detail": "Not Found"})  # FastAPI's (llama-cpp-python, vLLM)

Answer = tuple[int, Any]


@dataclass
class Flavour:
    """One server kind's discovery endpoints, for a model served with `window` tokens."""

    name: str
    window: int | None
    loaded: bool = True
    modelfile_num_ctx: bool = True  # ollama: the Modelfile sets num_ctx (else its default)
    ollama_version: str = "0.12.3"

    def __post_init__(self) -> None:
        if self.name not in FLAVOURS:
            raise ValueError(f"unknown server flavour {self.name!r}: one of {FLAVOURS}")

    # ----- what each GET / POST of a discovery endpoint answers (None: not a discovery route)

    def get(self, path: str, models: list[str]) -> Answer | None:
        path = path.split("?")[0].rstrip("/")
        if path.endswith("/props"):
            return self._props() if self.name == "llama.cpp" else NOT_FOUND
        if path == "/api/v0/models":
            return self._lmstudio_models(models) if self.name == "lmstudio" else NOT_FOUND
        if path == "/api/version":
            ollama = self.name == "ollama"
            return (200, {"version": self.ollama_version}) if ollama else NOT_FOUND
        if path == "/api/ps":
            return self._ollama_ps(models) if self.name == "ollama" else NOT_FOUND
        return None

    def post(self, path: str, body: dict[str, Any], ratio: float | None) -> Answer | None:
        """Ollama's /api/show; llama-cpp-python's token count and text completions (`ratio`:
        tokens per character, else chars / 4). None: a chat request, answered as scripted."""
        path = path.rstrip("/")
        if path == "/api/show":
            return self._ollama_show(body) if self.name == "ollama" else NOT_FOUND
        if self.name != "llama-cpp-python":
            return None
        if path == "/extras/tokenize/count" and ratio is not None:
            return 200, {"count": text_tokens(str(body.get("input", "")), ratio)}
        if path.endswith("/v1/completions"):
            prompt = text_tokens(str(body.get("prompt", "")), ratio)
            return self.completion_overflow(prompt, body.get("max_tokens")) or (
                200,
                _text_completion(str(body.get("model")), prompt),
            )
        return None

    def model_entry(self, model: str) -> dict[str, Any]:
        """One entry of GET /v1/models as this server lists it."""
        entry: dict[str, Any] = {"id": model, "object": "model", "created": 0}
        if self.name == "llama.cpp":
            meta = {"vocab_type": 2, "n_vocab": 262144, "n_ctx_train": TRAINED, "n_embd": 640}
            entry.update(owned_by="llamacpp", meta=meta)
        elif self.name == "llama-cpp-python":
            entry = {"id": model, "object": "model", "owned_by": "me", "permissions": []}
        elif self.name == "vllm":
            entry.update(owned_by="vllm", root=model, parent=None, max_model_len=self.window)
            entry["permission"] = [{"id": "modelperm-0", "object": "model_permission"}]
        elif self.name == "lmstudio":
            entry["owned_by"] = "organization_owner"
        else:
            entry["owned_by"] = "library"
        return entry

    # ----- a prompt over the window

    def overflow(self, prompt: int, stream: bool, max_tokens: int | None) -> Answer | None:
        """The answer to a chat request whose prompt is over the window: (status, error body),
        ("drop", None) for a stream cut, None when the server goes on (Ollama truncates)."""
        window = self.window or 0
        if self.name == "ollama":
            return None
        if self.name == "llama.cpp":
            message = (
                f"the request exceeds the available context size ({prompt} tokens > "
                f"{window}), try increasing it"
            )
            return 400, {
                "error": {"code": 400, "message": message, "type": "exceed_context_size_error"}
            }
        if self.name == "llama-cpp-python":
            if prompt < window:
                return None
            if stream:
                return "drop", None  # the event stream started before the error
            return 400, {"error": self.context_length_error(prompt, window, max_tokens)}
        return 400, {"error": self.context_length_error(prompt, window, max_tokens)}

    @staticmethod
    def context_length_error(prompt: int, window: int, max_tokens: int | None) -> dict[str, Any]:
        asked = prompt + (max_tokens or 0)
        return {
            "message": f"This model's maximum context length is {window} tokens. However, "
            f"you requested {asked} tokens ({prompt} in the messages, {max_tokens} in the "
            "completion). Please reduce the length of the messages or completion.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }

    def completion_overflow(self, prompt: int, max_tokens: int | None) -> Answer | None:
        """POST /v1/completions (text) with a prompt over the window: llama-cpp-python's error
        words for a text completion; None when it fits."""
        window = self.window or 0
        if self.name != "llama-cpp-python" or prompt < window:
            return None
        error = self.context_length_error(prompt, window, max_tokens)
        error["message"] = (
            f"This model's maximum context length is {window} tokens, however you requested "
            f"{prompt + (max_tokens or 0)} tokens ({prompt} in your prompt; {max_tokens} for "
            "the completion). Please reduce your prompt; or completion length."
        )
        error["param"] = "messages"
        return 400, {"error": error}

    # ----- the endpoints

    def _props(self) -> Answer:
        if self.window is None:
            return 404, {"error": {"code": 404, "message": "File Not Found", "type": "not_found"}}
        settings = {
            "id": 0,
            "id_task": -1,
            "n_ctx": self.window,
            "speculative": False,
            "is_processing": False,
            "params": {"n_predict": -1, "max_tokens": -1},
        }
        return 200, {
            "default_generation_settings": settings,
            "total_slots": 1,
            "model_path": "/models/model.gguf",
            "chat_template": "...",
            "modalities": {"vision": False},
            "build_info": "b6000-0000000",
        }

    def _lmstudio_models(self, models: list[str]) -> Answer:
        data = []
        for model in [*models, "text-embedding-nomic-embed-text-v1.5"]:
            entry = {
                "id": model,
                "object": "model",
                "type": "llm",
                "arch": "gemma3",
                "publisher": "lmstudio-community",
                "compatibility_type": "gguf",
                "quantization": "Q4_K_M",
                "state": "not-loaded",
                "max_context_length": TRAINED,
            }
            if model in models and self.loaded and self.window:
                entry.update(state="loaded", loaded_context_length=self.window)
            if model not in models:
                entry.update(type="embeddings", arch="nomic-bert", max_context_length=2048)
            data.append(entry)
        return 200, {"object": "list", "data": data}

    def _ollama_show(self, body: dict[str, Any]) -> Answer:
        parameters = 'stop                           "<end_of_turn>"'
        if self.window is not None and self.modelfile_num_ctx:
            parameters = f"num_ctx                        {self.window}\n{parameters}"
        return 200, {
            "modelfile": '# Modelfile generated by "ollama show"\nFROM /models/blob',
            "parameters": parameters,
            "template": "{{ .Prompt }}",
            "details": {
                "parent_model": "",
                "format": "gguf",
                "family": "gemma3",
                "families": ["gemma3"],
                "parameter_size": "268.10M",
                "quantization_level": "Q8_0",
            },
            "model_info": {
                "general.architecture": "gemma3",
                "gemma3.context_length": TRAINED,
                "gemma3.block_count": 18,
            },
            "capabilities": ["completion"],
            "modified_at": "2026-11-01T10:00:00Z",
        }

    def _ollama_ps(self, models: list[str]) -> Answer:
        if not self.loaded or self.window is None:
            return 200, {"models": []}
        running = [
            {
                "name": m,
                "model": m,
                "size": 1,
                "digest": "0" * 64,
                "details": {"format": "gguf", "family": "gemma3"},
                "expires_at": "2026-11-24T21:00:00Z",
                "size_vram": 0,
                "context_length": self.window,
            }
            for m in models
        ]
        return 200, {"models": running}


def text_tokens(text: str, ratio: float | None) -> int:
    """A text's tokens as the scripted server counts them: chars × ratio, else chars / 4."""
    return int(len(text) * ratio) if ratio is not None else len(text) // 4


def _text_completion(model: str, prompt: int) -> dict[str, Any]:
    choice = {"text": " x", "index": 0, "logprobs": None, "finish_reason": "length"}
    return {
        "id": "cmpl-scripted",
        "object": "text_completion",
        "created": 0,
        "model": model,
        "choices": [choice],
        "usage": {"prompt_tokens": prompt, "completion_tokens": 1, "total_tokens": prompt + 1},
    }
