"""The LLM adapter: litellm behind pi's message and event shapes.

``config`` resolves which model to call, ``messages`` turns pi's LLM messages into OpenAI chat
messages, ``stream`` runs one streamed completion and ends it with a complete pi assistant message,
``errors`` classifies failed messages the way pi does (context overflow, retryable) and ``models``
answers context-window and model-list questions from litellm's bundled model table.

Only this package imports litellm, and only lazily (``_litellm.load_litellm``): importing it takes
seconds, and the language server must answer ``initialize`` first.
"""
