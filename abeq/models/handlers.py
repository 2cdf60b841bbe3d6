"""Shared by the in-process providers' litellm handlers: filling a response, reading the schema."""

from __future__ import annotations


def fill_response(
    model_response,
    model: str,
    text: str,
    prompt_tokens: int,
    completion_tokens: int,
    tool_calls=None,
    cached_tokens: int = 0,
):
    """`cached_tokens`: of the prompt, those reused rather than evaluated (the embedded model's KV cache)."""
    import litellm

    model_response.choices[0].message.content = text
    if tool_calls:
        from litellm.types.utils import ChatCompletionMessageToolCall, Function

        model_response.choices[0].message.tool_calls = [
            ChatCompletionMessageToolCall(id=c["id"], type="function", function=Function(**c["function"]))
            for c in tool_calls
        ]
        model_response.choices[0].finish_reason = "tool_calls"
    model_response.model = model
    model_response.usage = litellm.Usage(
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        total_tokens=prompt_tokens + completion_tokens,
        **({"prompt_tokens_details": {"cached_tokens": cached_tokens}} if cached_tokens else {}),
    )
    return model_response


def schema_from_optional_params(optional_params: dict):
    rf = (optional_params or {}).get("response_format")
    if isinstance(rf, dict):
        if rf.get("type") == "json_schema":
            return (rf.get("json_schema") or {}).get("schema")
        if "schema" in rf:
            return rf["schema"]
    return None


def make_scripted_handler(base):
    """The litellm handler of `scripted/…`: replies come from abeq.testing.scripted (the rules,
    queued replies or a test's own handler)."""
    from ..testing.scripted import respond_message

    class ScriptedLLM(base):
        def _reply(self, model, messages, model_response, optional_params):
            opts = optional_params or {}
            msg = respond_message(
                model, messages, schema_from_optional_params(opts), opts.get("tools"), opts.get("tool_choice")
            )
            text = msg.get("content") or ""
            pt = sum(len(str(m.get("content") or "")) for m in messages) // 4
            return fill_response(
                model_response, f"scripted/{model}", text, pt, max(1, len(text) // 4), msg.get("tool_calls")
            )

        def completion(
            self,
            model,
            messages,
            api_base,
            custom_prompt_dict,
            model_response,
            print_verbose,
            encoding,
            api_key,
            logging_obj,
            optional_params,
            *a,
            **kw,
        ):
            return self._reply(model, messages, model_response, optional_params)

        async def acompletion(
            self,
            model,
            messages,
            api_base,
            custom_prompt_dict,
            model_response,
            print_verbose,
            encoding,
            api_key,
            logging_obj,
            optional_params,
            *a,
            **kw,
        ):
            return self._reply(model, messages, model_response, optional_params)

    return ScriptedLLM()
