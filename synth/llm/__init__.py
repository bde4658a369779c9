"""The LLM layer: one async protocol over vLLM (in-process), OpenAI-compatible servers, the embedded
default model and a scripted fake, with a content-addressed cache, structured output and accounting."""
