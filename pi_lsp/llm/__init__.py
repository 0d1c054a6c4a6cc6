"""Models: pi's messages and events in, each provider's wire API out.

``config`` and ``catalog`` resolve which model to call and with which key; ``providers`` is the
provider table (each provider's wire API, endpoint and key variables); ``messages`` turns pi's
LLM messages into chat messages; ``stream`` runs one streamed completion and ends it with a
complete pi assistant message, over the wire API pi-lsp speaks itself for a table provider
(``direct`` for ``openai-completions``, ``anthropic_request`` + ``anthropic_direct`` for
``anthropic-messages``, both on ``http_stream``) or over litellm for the long tail;
``provider_errors`` describes a provider's failure as pi's ``errorMessage``; ``failed_messages``
classifies failed messages the way pi does (context overflow, retryable, refused key); ``models``
answers context-window and model-list questions from litellm's bundled model table (a JSON file,
read without importing litellm).

Only this package imports litellm, and only lazily (``_litellm.load_litellm``), on the first use of
a model outside the table: importing it takes seconds and a few hundred MB.
"""
