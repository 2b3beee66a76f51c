<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
    <context>
        <name>ConversationExporter</name>
        <message>
            <source>Conversation</source>
            <translation>对话</translation>
        </message>
        <message>
            <source>System</source>
            <translation>系统</translation>
        </message>
        <message>
            <source>User</source>
            <translation>用户</translation>
        </message>
        <message>
            <source>Assistant</source>
            <translation>助手</translation>
        </message>
        <message>
            <source>%1 tokens · first token %2 s · %3 tokens/s</source>
            <translation>%1 个词元 · 首词元 %2 秒 · %3 词元/秒</translation>
        </message>
    </context>
    <context>
        <name>brook::ChatPane</name>
        <message>
            <source>New chat</source>
            <translation>新对话</translation>
        </message>
        <message>
            <source>Preset:</source>
            <translation>预设：</translation>
        </message>
        <message>
            <source>Settings</source>
            <translation>设置</translation>
        </message>
        <message>
            <source>System prompt and sampling for this conversation</source>
            <translation>本对话的系统提示词与采样参数</translation>
        </message>
        <message>
            <source>Ask anything. Ctrl+Enter sends, Esc stops.</source>
            <translation>尽管提问。Ctrl+Enter 发送，Esc 停止。</translation>
        </message>
        <message>
            <source>Type a message… (Ctrl+Enter to send)</source>
            <translation>输入消息……（Ctrl+Enter 发送）</translation>
        </message>
        <message>
            <source>Send</source>
            <translation>发送</translation>
        </message>
        <message>
            <source>Send (Ctrl+Enter)</source>
            <translation>发送（Ctrl+Enter）</translation>
        </message>
        <message>
            <source>Stop</source>
            <translation>停止</translation>
        </message>
        <message>
            <source>Stop generating (Esc)</source>
            <translation>停止生成（Esc）</translation>
        </message>
        <message>
            <source>(none)</source>
            <translation>（无）</translation>
        </message>
        <message>
            <source>General</source>
            <translation>通用</translation>
        </message>
        <message>
            <source>Writing</source>
            <translation>写作</translation>
        </message>
        <message>
            <source>Summary</source>
            <translation>总结</translation>
        </message>
    </context>
    <context>
        <name>brook::ChatSession</name>
        <message>
            <source>Could not save the message: %1</source>
            <translation>无法保存消息：%1</translation>
        </message>
        <message>
            <source>Wait for the answer or stop it before sending.</source>
            <translation>请等待回答完成，或先停止生成再发送。</translation>
        </message>
        <message>
            <source>Open a model first.</source>
            <translation>请先打开一个模型。</translation>
        </message>
        <message>
            <source>This conversation (%1 tokens) no longer fits the model's context of %2 tokens. Start a new chat or delete earlier messages.</source>
            <translation>本对话（%1 个词元）已超出模型 %2 个词元的上下文长度。请新建对话或删除较早的消息。</translation>
        </message>
        <message>
            <source>The engine refused the request: %1</source>
            <translation>引擎拒绝了该请求：%1</translation>
        </message>
        <message>
            <source>Could not delete the message: %1</source>
            <translation>无法删除消息：%1</translation>
        </message>
    </context>
    <context>
        <name>brook::ChatSettingsDialog</name>
        <message>
            <source>Conversation settings</source>
            <translation>对话设置</translation>
        </message>
        <message>
            <source>System prompt:</source>
            <translation>系统提示词：</translation>
        </message>
        <message>
            <source>Input template:</source>
            <translation>输入模板：</translation>
        </message>
        <message>
            <source>Temperature:</source>
            <translation>温度：</translation>
        </message>
        <message>
            <source>Top-p:</source>
            <translation>Top-p：</translation>
        </message>
        <message>
            <source>Top-k:</source>
            <translation>Top-k：</translation>
        </message>
        <message>
            <source>Max tokens:</source>
            <translation>最大词元数：</translation>
        </message>
        <message>
            <source>Repetition penalty:</source>
            <translation>重复惩罚：</translation>
        </message>
        <message>
            <source>Presence penalty:</source>
            <translation>存在惩罚：</translation>
        </message>
        <message>
            <source>Frequency penalty:</source>
            <translation>频率惩罚：</translation>
        </message>
        <message>
            <source>Seed:</source>
            <translation>随机种子：</translation>
        </message>
        <message>
            <source>Optional: how the assistant should behave</source>
            <translation>可选：助手应如何表现</translation>
        </message>
        <message>
            <source>Optional: wraps each message; {input} marks where your text goes</source>
            <translation>可选：包裹每条消息；{input} 表示你的文字所在位置</translation>
        </message>
        <message>
            <source>off</source>
            <translation>关闭</translation>
        </message>
        <message>
            <source>random</source>
            <translation>随机</translation>
        </message>
        <message>
            <source>Model defaults</source>
            <translation>模型默认值</translation>
        </message>
        <message>
            <source>Sampling values from the model's generation_config.json</source>
            <translation>采用模型 generation_config.json 中的采样参数</translation>
        </message>
    </context>
    <context>
        <name>brook::CodeBlockView</name>
        <message>
            <source>Copied</source>
            <translation>已复制</translation>
        </message>
        <message>
            <source>Copy</source>
            <translation>复制</translation>
        </message>
        <message>
            <source>Copy this code</source>
            <translation>复制这段代码</translation>
        </message>
    </context>
    <context>
        <name>brook::ConversationActions</name>
        <message>
            <source>Cannot read %1: %2</source>
            <translation>无法读取 %1：%2</translation>
        </message>
        <message>
            <source>%1 is not a conversation Brook can import: %2</source>
            <translation>%1 不是 Brook 可以导入的对话：%2</translation>
        </message>
        <message>
            <source>Could not store the conversation: %1</source>
            <translation>无法保存对话：%1</translation>
        </message>
        <message>
            <source>Import a conversation</source>
            <translation>导入对话</translation>
        </message>
        <message>
            <source>JSON (*.json)</source>
            <translation>JSON（*.json）</translation>
        </message>
        <message>
            <source>Import</source>
            <translation>导入</translation>
        </message>
        <message>
            <source>The conversation is no longer in the history.</source>
            <translation>该对话已不在历史记录中。</translation>
        </message>
        <message>
            <source>Cannot write %1: %2</source>
            <translation>无法写入 %1：%2</translation>
        </message>
        <message>
            <source>Export conversation</source>
            <translation>导出对话</translation>
        </message>
        <message>
            <source>Markdown (*.md)</source>
            <translation>Markdown（*.md）</translation>
        </message>
        <message>
            <source>Saved %1</source>
            <translation>已保存 %1</translation>
        </message>
        <message>
            <source>Export</source>
            <translation>导出</translation>
        </message>
        <message>
            <source>Rename</source>
            <translation>重命名</translation>
        </message>
        <message>
            <source>Title:</source>
            <translation>标题：</translation>
        </message>
        <message>
            <source>Delete conversation</source>
            <translation>删除对话</translation>
        </message>
        <message>
            <source>Delete this conversation and all its messages?</source>
            <translation>删除此对话及其全部消息？</translation>
        </message>
    </context>
    <context>
        <name>brook::ConversationListPanel</name>
        <message>
            <source>New chat</source>
            <translation>新对话</translation>
        </message>
        <message>
            <source>%1
Last message: %2</source>
            <translation>%1
最后一条消息：%2</translation>
        </message>
        <message>
            <source>Open</source>
            <translation>打开</translation>
        </message>
        <message>
            <source>Open side by side</source>
            <translation>并排打开</translation>
        </message>
        <message>
            <source>Rename…</source>
            <translation>重命名……</translation>
        </message>
        <message>
            <source>Export…</source>
            <translation>导出……</translation>
        </message>
        <message>
            <source>Delete</source>
            <translation>删除</translation>
        </message>
        <message>
            <source>Start a new conversation (Ctrl+N)</source>
            <translation>开始新对话（Ctrl+N）</translation>
        </message>
        <message>
            <source>Search conversations</source>
            <translation>搜索对话</translation>
        </message>
    </context>
    <context>
        <name>brook::DownloadDialog</name>
        <message>
            <source>Saved to the Hugging Face cache: %1</source>
            <translation>保存到 Hugging Face 缓存：%1</translation>
        </message>
        <message>
            <source>Connecting to %1…</source>
            <translation>正在连接 %1……</translation>
        </message>
        <message>
            <source>File %1 of %2: %3</source>
            <translation>第 %1 个文件，共 %2 个：%3</translation>
        </message>
        <message>
            <source>%1 of %2</source>
            <translation>%1 / %2</translation>
        </message>
        <message>
            <source>%1/s</source>
            <translation>%1/秒</translation>
        </message>
        <message>
            <source>%1 min %2 s left</source>
            <translation>剩余 %1 分 %2 秒</translation>
        </message>
        <message>
            <source>Downloaded to %1</source>
            <translation>已下载到 %1</translation>
        </message>
        <message>
            <source>The model source cannot be reached: this computer seems to be offline, or the site is blocked. Try a mirror, or open a model folder you already have.</source>
            <translation>无法连接模型来源：这台电脑似乎处于离线状态，或该网站无法访问。请尝试镜像站，或打开已有的模型文件夹。</translation>
        </message>
        <message>
            <source>The download failed: %1</source>
            <translation>下载失败：%1</translation>
        </message>
        <message>
            <source>Cancelled. What was downloaded is kept: Download resumes from there.</source>
            <translation>已取消。已下载的部分会保留，再次下载时将从断点继续。</translation>
        </message>
        <message>
            <source>Download a model</source>
            <translation>下载模型</translation>
        </message>
        <message>
            <source>Model:</source>
            <translation>模型：</translation>
        </message>
        <message>
            <source>Source:</source>
            <translation>来源：</translation>
        </message>
        <message>
            <source>Hugging Face (huggingface.co)</source>
            <translation>Hugging Face（huggingface.co）</translation>
        </message>
        <message>
            <source>Mirror (hf-mirror.com)</source>
            <translation>镜像站（hf-mirror.com）</translation>
        </message>
        <message>
            <source>Other endpoint (HF_ENDPOINT)</source>
            <translation>其他地址（HF_ENDPOINT）</translation>
        </message>
        <message>
            <source>https://your-mirror.example</source>
            <translation>https://你的镜像地址</translation>
        </message>
        <message>
            <source>Download</source>
            <translation>下载</translation>
        </message>
        <message>
            <source>Cancel</source>
            <translation>取消</translation>
        </message>
        <message>
            <source>Open a local folder instead…</source>
            <translation>改为打开本地文件夹……</translation>
        </message>
        <message>
            <source>Close</source>
            <translation>关闭</translation>
        </message>
    </context>
    <context>
        <name>brook::EndpointPanel</name>
        <message>
            <source>Requests in progress: %1 · completions served: %2</source>
            <translation>进行中的请求：%1 · 已完成的请求：%2</translation>
        </message>
        <message>
            <source>Serve the OpenAI-compatible API</source>
            <translation>提供 OpenAI 兼容接口</translation>
        </message>
        <message>
            <source>Other programs can then use this model; chats and API requests share the engine</source>
            <translation>其他程序也可以使用此模型；对话与接口请求共用同一个引擎</translation>
        </message>
        <message>
            <source>Host:</source>
            <translation>主机：</translation>
        </message>
        <message>
            <source>Port:</source>
            <translation>端口：</translation>
        </message>
        <message>
            <source>API key:</source>
            <translation>API 密钥：</translation>
        </message>
        <message>
            <source>Base URL:</source>
            <translation>基础地址：</translation>
        </message>
        <message>
            <source>Copy</source>
            <translation>复制</translation>
        </message>
        <message>
            <source>required for this host</source>
            <translation>此主机地址必须设置</translation>
        </message>
        <message>
            <source>optional on this computer</source>
            <translation>仅本机访问时可不设置</translation>
        </message>
        <message>
            <source>Warning: %1 is reachable from other computers. An API key is required.</source>
            <translation>警告：其他电脑可以访问 %1，必须设置 API 密钥。</translation>
        </message>
    </context>
    <context>
        <name>brook::EngineMonitor</name>
        <message>
            <source>No model loaded</source>
            <translation>未加载模型</translation>
        </message>
        <message>
            <source>%1 tokens/s · KV cache %2% · running %3 · waiting %4</source>
            <translation>%1 词元/秒 · KV 缓存 %2% · 运行中 %3 · 等待中 %4</translation>
        </message>
        <message>
            <source>Generated tokens/s</source>
            <translation>生成速度（词元/秒）</translation>
        </message>
        <message>
            <source>KV cache used (%)</source>
            <translation>KV 缓存占用（%）</translation>
        </message>
    </context>
    <context>
        <name>brook::LocalEndpoint</name>
        <message>
            <source>Enter a host to listen on.</source>
            <translation>请输入要监听的主机地址。</translation>
        </message>
        <message>
            <source>Listening on %1 lets other computers use the model: set an API key first.</source>
            <translation>监听 %1 会让其他电脑使用此模型：请先设置 API 密钥。</translation>
        </message>
        <message>
            <source>The port must be between 0 (any free port) and 65535.</source>
            <translation>端口必须在 0（任意空闲端口）到 65535 之间。</translation>
        </message>
    </context>
    <context>
        <name>brook::LogView</name>
        <message>
            <source>All messages</source>
            <translation>全部消息</translation>
        </message>
        <message>
            <source>Info and above</source>
            <translation>信息及以上</translation>
        </message>
        <message>
            <source>Warnings and errors</source>
            <translation>警告和错误</translation>
        </message>
        <message>
            <source>Errors only</source>
            <translation>仅错误</translation>
        </message>
        <message>
            <source>Clear</source>
            <translation>清空</translation>
        </message>
    </context>
    <context>
        <name>brook::MainWindow</name>
        <message>
            <source>Brook — %1</source>
            <translation>Brook — %1</translation>
        </message>
        <message>
            <source>Brook</source>
            <translation>Brook</translation>
        </message>
        <message>
            <source>&amp;File</source>
            <translation>文件(&amp;F)</translation>
        </message>
        <message>
            <source>Recent models</source>
            <translation>最近使用的模型</translation>
        </message>
        <message>
            <source>Export conversation</source>
            <translation>导出对话</translation>
        </message>
        <message>
            <source>&amp;Chat</source>
            <translation>对话(&amp;C)</translation>
        </message>
        <message>
            <source>&amp;View</source>
            <translation>视图(&amp;V)</translation>
        </message>
        <message>
            <source>Language</source>
            <translation>语言</translation>
        </message>
        <message>
            <source>Theme</source>
            <translation>主题</translation>
        </message>
        <message>
            <source>&amp;Help</source>
            <translation>帮助(&amp;H)</translation>
        </message>
        <message>
            <source>New chat</source>
            <translation>新对话</translation>
        </message>
        <message>
            <source>Open model folder…</source>
            <translation>打开模型文件夹……</translation>
        </message>
        <message>
            <source>Download model…</source>
            <translation>下载模型……</translation>
        </message>
        <message>
            <source>Import conversation (JSON)…</source>
            <translation>导入对话（JSON）……</translation>
        </message>
        <message>
            <source>As Markdown…</source>
            <translation>导出为 Markdown……</translation>
        </message>
        <message>
            <source>As JSON (OpenAI messages)…</source>
            <translation>导出为 JSON（OpenAI messages）……</translation>
        </message>
        <message>
            <source>Quit</source>
            <translation>退出</translation>
        </message>
        <message>
            <source>Send</source>
            <translation>发送</translation>
        </message>
        <message>
            <source>Stop</source>
            <translation>停止</translation>
        </message>
        <message>
            <source>Stop generating (Esc)</source>
            <translation>停止生成（Esc）</translation>
        </message>
        <message>
            <source>Regenerate</source>
            <translation>重新生成</translation>
        </message>
        <message>
            <source>Conversation settings…</source>
            <translation>对话设置……</translation>
        </message>
        <message>
            <source>Prompt presets…</source>
            <translation>提示词预设……</translation>
        </message>
        <message>
            <source>Choose a preset automatically by keywords</source>
            <translation>根据关键词自动选择预设</translation>
        </message>
        <message>
            <source>Close chat</source>
            <translation>关闭对话</translation>
        </message>
        <message>
            <source>Move to the other side</source>
            <translation>移到另一侧</translation>
        </message>
        <message>
            <source>Follow the system</source>
            <translation>跟随系统</translation>
        </message>
        <message>
            <source>Light</source>
            <translation>浅色</translation>
        </message>
        <message>
            <source>Dark</source>
            <translation>深色</translation>
        </message>
        <message>
            <source>About Brook</source>
            <translation>关于 Brook</translation>
        </message>
        <message>
            <source>Local endpoint</source>
            <translation>本地接口</translation>
        </message>
        <message>
            <source>Engine monitor</source>
            <translation>引擎监视器</translation>
        </message>
        <message>
            <source>Log</source>
            <translation>日志</translation>
        </message>
        <message>
            <source>Toolbar</source>
            <translation>工具栏</translation>
        </message>
        <message>
            <source>(none yet)</source>
            <translation>（暂无）</translation>
        </message>
        <message>
            <source>A model is already loading.</source>
            <translation>已有模型正在加载。</translation>
        </message>
        <message>
            <source>Open a model folder</source>
            <translation>打开模型文件夹</translation>
        </message>
        <message>
            <source>%1 is ready.</source>
            <translation>%1 已就绪。</translation>
        </message>
        <message>
            <source>Could not load %1:
%2</source>
            <translation>无法加载 %1：
%2</translation>
        </message>
        <message>
            <source>The model did not load.</source>
            <translation>模型未能加载。</translation>
        </message>
        <message>
            <source>Could not create a conversation: %1</source>
            <translation>无法创建对话：%1</translation>
        </message>
        <message>
            <source>Load a model first: the endpoint serves the model this window runs.</source>
            <translation>请先加载模型：本地接口提供的就是本窗口运行的模型。</translation>
        </message>
        <message>
            <source>No model loaded</source>
            <translation>未加载模型</translation>
        </message>
        <message>
            <source>%1 on %2</source>
            <translation>%1（%2）</translation>
        </message>
        <message>
            <source>running %1 · waiting %2 · KV cache %3%</source>
            <translation>运行中 %1 · 等待中 %2 · KV 缓存 %3%</translation>
        </message>
        <message>
            <source>API on :%1</source>
            <translation>接口端口 :%1</translation>
        </message>
        <message>
            <source>&lt;b&gt;Brook %1&lt;/b&gt;&lt;br&gt;Runs ERNIE-4.5 locally: a C++ engine with paged KV cache and continuous batching, an OpenAI-compatible endpoint and this desktop app.&lt;br&gt;Backend: %2</source>
            <translation>&lt;b&gt;Brook %1&lt;/b&gt;&lt;br&gt;在本机运行 ERNIE-4.5：带分页 KV 缓存与连续批处理的 C++ 引擎、OpenAI 兼容接口以及本桌面应用。&lt;br&gt;后端：%2</translation>
        </message>
        <message>
            <source>This language is not available.</source>
            <translation>此语言不可用。</translation>
        </message>
    </context>
    <context>
        <name>brook::MessageBubble</name>
        <message>
            <source>Generating… %1 tokens</source>
            <translation>生成中…… %1 个词元</translation>
        </message>
        <message>
            <source>Thinking…</source>
            <translation>思考中……</translation>
        </message>
        <message>
            <source>%1 tokens · first token %2 s · %3 tokens/s</source>
            <translation>%1 个词元 · 首词元 %2 秒 · %3 词元/秒</translation>
        </message>
        <message>
            <source>stopped</source>
            <translation>已停止</translation>
        </message>
        <message>
            <source>cut at max tokens</source>
            <translation>达到最大词元数而截断</translation>
        </message>
        <message>
            <source>You</source>
            <translation>你</translation>
        </message>
        <message>
            <source>Assistant</source>
            <translation>助手</translation>
        </message>
        <message>
            <source>Previous version</source>
            <translation>上一个版本</translation>
        </message>
        <message>
            <source>Next version</source>
            <translation>下一个版本</translation>
        </message>
        <message>
            <source>Save and resend</source>
            <translation>保存并重新发送</translation>
        </message>
        <message>
            <source>Cancel</source>
            <translation>取消</translation>
        </message>
        <message>
            <source>Copy message</source>
            <translation>复制消息</translation>
        </message>
        <message>
            <source>Edit and resend (the original stays as a branch)</source>
            <translation>编辑并重新发送（原消息保留为分支）</translation>
        </message>
        <message>
            <source>Regenerate (the current answer stays as a branch)</source>
            <translation>重新生成（当前回答保留为分支）</translation>
        </message>
        <message>
            <source>Delete this message and its replies</source>
            <translation>删除此消息及其回复</translation>
        </message>
    </context>
    <context>
        <name>brook::ModelPanel</name>
        <message>
            <source>Checking the model folder…</source>
            <translation>正在检查模型文件夹……</translation>
        </message>
        <message>
            <source>Reading weights and allocating the KV cache…</source>
            <translation>正在读取权重并分配 KV 缓存……</translation>
        </message>
        <message>
            <source>Warming up…</source>
            <translation>正在预热……</translation>
        </message>
        <message>
            <source>Ready</source>
            <translation>就绪</translation>
        </message>
        <message>
            <source>Welcome to Brook</source>
            <translation>欢迎使用 Brook</translation>
        </message>
        <message>
            <source>Brook runs ERNIE-4.5 on this computer: nothing you type leaves it. Download the model (about 0.7 GB) or open a model folder you already have.</source>
            <translation>Brook 在这台电脑上运行 ERNIE-4.5：你输入的内容不会离开本机。请下载模型（约 0.7 GB），或打开已有的模型文件夹。</translation>
        </message>
        <message>
            <source>Download ERNIE-4.5-0.3B-PT…</source>
            <translation>下载 ERNIE-4.5-0.3B-PT……</translation>
        </message>
        <message>
            <source>Open a model folder…</source>
            <translation>打开模型文件夹……</translation>
        </message>
        <message>
            <source>Recent models (double-click to load):</source>
            <translation>最近使用的模型（双击加载）：</translation>
        </message>
        <message>
            <source>This will take about %1 for the weights and %2 for the KV cache (%3).</source>
            <translation>预计占用：权重约 %1，KV 缓存约 %2（%3）。</translation>
        </message>
        <message>
            <source>This will take about %1 for the weights, and most of the free GPU memory for the KV cache (%2).</source>
            <translation>预计占用：权重约 %1，KV 缓存将使用大部分空闲显存（%2）。</translation>
        </message>
    </context>
    <context>
        <name>brook::PresetEditorDialog</name>
        <message>
            <source>New preset</source>
            <translation>新预设</translation>
        </message>
        <message>
            <source>Prompt presets</source>
            <translation>提示词预设</translation>
        </message>
        <message>
            <source>Add</source>
            <translation>添加</translation>
        </message>
        <message>
            <source>Delete</source>
            <translation>删除</translation>
        </message>
        <message>
            <source>Restore built-in presets</source>
            <translation>恢复内置预设</translation>
        </message>
        <message>
            <source>Name:</source>
            <translation>名称：</translation>
        </message>
        <message>
            <source>System prompt:</source>
            <translation>系统提示词：</translation>
        </message>
        <message>
            <source>Input template:</source>
            <translation>输入模板：</translation>
        </message>
        <message>
            <source>Keywords:</source>
            <translation>关键词：</translation>
        </message>
        <message>
            <source>Temperature:</source>
            <translation>温度：</translation>
        </message>
        <message>
            <source>Top-p:</source>
            <translation>Top-p：</translation>
        </message>
        <message>
            <source>Max tokens:</source>
            <translation>最大词元数：</translation>
        </message>
        <message>
            <source>Set sampling</source>
            <translation>设置采样参数</translation>
        </message>
        <message>
            <source>{input} marks where the message goes; empty: the message as typed</source>
            <translation>{input} 表示消息所在位置；留空则按原样发送</translation>
        </message>
        <message>
            <source>Comma-separated; any of them in a message picks this preset</source>
            <translation>用逗号分隔；消息中出现任意一个即选用此预设</translation>
        </message>
    </context>
    <context>
        <name>main</name>
        <message>
            <source>Cannot open the conversation history:
%1</source>
            <translation>无法打开对话历史：
%1</translation>
        </message>
    </context>
</TS>
