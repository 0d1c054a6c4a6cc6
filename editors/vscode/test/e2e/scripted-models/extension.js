// A chat model for pi-lsp's end-to-end tests, answering from the scripted model server (see README.md).
const vscode = require('vscode');

const MODEL = {
  vendor: 'test',
  name: 'Scripted (test)',
  family: 'scripted',
  version: '1',
  maxInputTokens: 64000,
  maxOutputTokens: 4096,
  capabilities: { toolCalling: true },
};

function activate(context) {
  let registered;
  context.subscriptions.push(
    vscode.commands.registerCommand('piTest.provideScriptedModel', () => {
      registered ??= vscode.lm.registerChatModelProvider('scripted-1', { provideLanguageModelResponse, provideTokenCount }, MODEL);
      context.subscriptions.push(registered);
    }),
  );
}

function messageText(message) {
  if (typeof message === 'string') return message;
  return message.content.map((part) => part.value ?? (part.content ? part.content.map((piece) => piece.value ?? '').join('') : JSON.stringify(part.input ?? ''))).join('');
}

/** Four characters a token, as the server's chars4 tokenizer counts. */
async function provideTokenCount(text) {
  return Math.ceil(messageText(text).length / 4);
}

function openAiMessage(message) {
  const role = message.role === vscode.LanguageModelChatMessageRole.Assistant ? 'assistant' : 'user';
  return { role, content: messageText(message) };
}

async function provideLanguageModelResponse(messages, options, extensionId, progress, token) {
  const abort = new AbortController();
  token.onCancellationRequested(() => abort.abort());
  const body = {
    model: 'scripted',
    stream: true,
    messages: messages.map(openAiMessage),
    tools: (options.tools ?? []).map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.inputSchema } })),
  };
  const response = await fetch(`${process.env.PI_TEST_MODEL_SERVER}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    signal: abort.signal,
  });
  if (!response.ok) {
    const text = await response.text();
    let message = text;
    try {
      message = JSON.parse(text).error.message;
    } catch {}
    if (response.status === 403) throw vscode.LanguageModelError.NoPermissions(message);
    throw new Error(message);
  }
  const calls = [];
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const bytes of response.body) {
    buffered += decoder.decode(bytes, { stream: true });
    let end;
    while ((end = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, end).trim();
      buffered = buffered.slice(end + 1);
      if (!line.startsWith('data:') || line === 'data: [DONE]') continue;
      const delta = JSON.parse(line.slice(5)).choices?.[0]?.delta ?? {};
      if (delta.content) progress.report({ index: 0, part: new vscode.LanguageModelTextPart(delta.content) });
      for (const call of delta.tool_calls ?? []) {
        calls[call.index] ??= { id: call.id, name: '', arguments: '' };
        calls[call.index].name += call.function?.name ?? '';
        calls[call.index].arguments += call.function?.arguments ?? '';
      }
    }
  }
  for (const call of calls) {
    progress.report({ index: 0, part: new vscode.LanguageModelToolCallPart(call.id, call.name, JSON.parse(call.arguments || '{}')) });
  }
}

module.exports = { activate };
