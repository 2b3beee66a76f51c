<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
    <context>
        <name>CapacityAdvisor</name>
        <message>
            <source>max-num-batched-tokens %1</source>
            <translation>max-num-batched-tokens %1</translation>
        </message>
        <message>
            <source>max-num-seqs %1</source>
            <translation>max-num-seqs %1</translation>
        </message>
        <message>
            <source>CUDA graphs off</source>
            <translation>关闭 CUDA 图</translation>
        </message>
        <message>
            <source>quantization int4</source>
            <translation>int4 量化</translation>
        </message>
    </context>
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
        <name>GuiTerms</name>
        <message>
            <source>Performance → Serving parameters</source>
            <translation>性能 → 服务参数</translation>
        </message>
        <message>
            <source>%1. Lower the context length or raise the GPU memory share in %2, or choose int4 quantization.</source>
            <translation>%1。请在%2中降低上下文长度或提高 GPU 显存占比，或选择 int4 量化。</translation>
        </message>
        <message>
            <source>%1. Choose another quantization (or none) in %2.</source>
            <translation>%1。请在%2中选择其他量化方式（或不量化）。</translation>
        </message>
        <message>
            <source>%1. Choose the cpu device in %2.</source>
            <translation>%1。请在%2中选择 cpu 设备。</translation>
        </message>
        <message>
            <source>%1. Lower max-model-len in %2.</source>
            <translation>%1。请在%2中降低 max-model-len。</translation>
        </message>
    </context>
    <context>
        <name>KnownModels</name>
        <message>
            <source>fits this computer (needs about %1)</source>
            <translation>本机可运行（约需 %1）</translation>
        </message>
        <message>
            <source>needs about %1, more than this computer can spare</source>
            <translation>约需 %1，超出本机可用内存</translation>
        </message>
        <message>
            <source>%1 · %2 download · %3</source>
            <translation>%1 · 下载 %2 · %3</translation>
        </message>
    </context>
    <context>
        <name>ModelFolderCheck</name>
        <message>
            <source>%1 does not exist.</source>
            <translation>%1 不存在。</translation>
        </message>
        <message>
            <source>%1 is not a folder.</source>
            <translation>%1 不是文件夹。</translation>
        </message>
        <message>
            <source>weights (*.safetensors)</source>
            <translation>权重文件（*.safetensors）</translation>
        </message>
        <message>
            <source>%1 is not a model folder: %2 missing. Choose the folder that holds the model's config.json.</source>
            <translation>%1 不是模型文件夹：缺少 %2。请选择包含模型 config.json 的文件夹。</translation>
        </message>
    </context>
    <context>
        <name>ScriptFontCheck</name>
        <message>
            <source>No Chinese font is installed, so Chinese text shows as empty boxes. Install one (Debian/Ubuntu: sudo apt install fonts-noto-cjk) and restart Brook.</source>
            <translation>No Chinese font is installed (sudo apt install fonts-noto-cjk). 未安装中文字体，中文显示为方框：请安装 fonts-noto-cjk 后重启 Brook。</translation>
        </message>
    </context>
    <context>
        <name>brook::CapacityPlanView</name>
        <message>
            <source>%1 GiB</source>
            <translation>%1 GiB</translation>
        </message>
        <message>
            <source>%1 MiB</source>
            <translation>%1 MiB</translation>
        </message>
        <message>
            <source>%1 KiB</source>
            <translation>%1 KiB</translation>
        </message>
        <message>
            <source>%1 bytes</source>
            <translation>%1 字节</translation>
        </message>
        <message>
            <source>max-num-seqs</source>
            <translation>max-num-seqs（最大并发序列数）</translation>
        </message>
        <message>
            <source>KV-cache memory (gpu-memory-utilization, max-model-len)</source>
            <translation>KV 缓存显存（gpu-memory-utilization、max-model-len）</translation>
        </message>
        <message>
            <source>max-num-batched-tokens</source>
            <translation>max-num-batched-tokens（每步最大词元数）</translation>
        </message>
        <message>
            <source>%1 (%2 M parameters%3)</source>
            <translation>%1（%2 M 参数%3）</translation>
        </message>
        <message>
            <source>none (CPU)</source>
            <translation>无（CPU）</translation>
        </message>
        <message>
            <source>off (enforce-eager)</source>
            <translation>关闭（enforce-eager）</translation>
        </message>
        <message>
            <source>%1 of host memory offered to the KV cache</source>
            <translation>分配给 KV 缓存的主机内存 %1</translation>
        </message>
        <message>
            <source>%1 of %2 (utilization %3)</source>
            <translation>%2 中的 %1（利用率 %3）</translation>
        </message>
        <message>
            <source>%1 bytes per token (%2 per block of %3 tokens)</source>
            <translation>每词元 %1 字节（每块 %3 个词元，%2）</translation>
        </message>
        <message>
            <source>%1: %2 blocks, %3 tokens</source>
            <translation>%1：%2 块，%3 个词元</translation>
        </message>
        <message>
            <source>%1× for %2 tokens per request</source>
            <translation>每请求 %2 个词元时为 %1×</translation>
        </message>
        <message>
            <source>%1 (the cache holds %2 full-length requests)</source>
            <translation>%1（缓存可容纳 %2 个满长度请求）</translation>
        </message>
        <message>
            <source>max-model-len %1 is longer than the model's context of %2 tokens.</source>
            <translation>max-model-len %1 超过了模型 %2 个词元的上下文长度。</translation>
        </message>
        <message>
            <source>Enter the GPU's memory to plan for.</source>
            <translation>请输入要规划的 GPU 显存大小。</translation>
        </message>
        <message>
            <source>Weights, activations and graphs (%1) do not fit in %2.</source>
            <translation>权重、激活与计算图（%1）放不进 %2。</translation>
        </message>
        <message>
            <source>The KV cache holds %1 tokens, but one request of max-model-len needs %2: this will not load.</source>
            <translation>KV 缓存只能容纳 %1 个词元，而一个 max-model-len 长度的请求需要 %2 个：无法加载。</translation>
        </message>
        <message>
            <source>Use gpu-memory-utilization %1</source>
            <translation>改用 gpu-memory-utilization %1</translation>
        </message>
        <message>
            <source>Use max-model-len %1</source>
            <translation>改用 max-model-len %1</translation>
        </message>
        <message>
            <source>Use a CPU KV cache of %1</source>
            <translation>改用 %1 的 CPU KV 缓存</translation>
        </message>
        <message>
            <source>The loaded engine: weights %1, KV cache %2 (%3 blocks of %4 tokens), activations %5.</source>
            <translation>已加载的引擎：权重 %1，KV 缓存 %2（%3 块，每块 %4 个词元），激活 %5。</translation>
        </message>
        <message>
            <source>No engine loaded: the plan is an estimate from the model's shape.</source>
            <translation>未加载引擎：以上规划是根据模型结构估算的。</translation>
        </message>
        <message>
            <source>Weights:</source>
            <translation>权重：</translation>
        </message>
        <message>
            <source>Activations and workspace:</source>
            <translation>激活与工作区：</translation>
        </message>
        <message>
            <source>CUDA graphs:</source>
            <translation>CUDA 图：</translation>
        </message>
        <message>
            <source>Memory budget:</source>
            <translation>内存预算：</translation>
        </message>
        <message>
            <source>KV cache per token:</source>
            <translation>每词元 KV 缓存：</translation>
        </message>
        <message>
            <source>KV cache:</source>
            <translation>KV 缓存：</translation>
        </message>
        <message>
            <source>Maximum concurrency:</source>
            <translation>最大并发：</translation>
        </message>
        <message>
            <source>Requests at once:</source>
            <translation>同时处理的请求：</translation>
        </message>
        <message>
            <source>Binding knob:</source>
            <translation>瓶颈参数：</translation>
        </message>
        <message>
            <source>KV-cache memory (CPU KV cache, max-model-len)</source>
            <translation>KV 缓存内存（CPU KV 缓存、max-model-len）</translation>
        </message>
        <message>
            <source>Quantization %1 does not suit this model: %2. Choose another under Quantization.</source>
            <translation>量化方式 %1 不适用于该模型：%2。请在“量化”中选择其他方式。</translation>
        </message>
        <message>
            <source>These would also fit, each on its own: %1.</source>
            <translation>以下任一单项调整也能装下：%1。</translation>
        </message>
        <message>
            <source>, </source>
            <translation>、</translation>
        </message>
        <message>
            <source>No setting here makes it fit: this model needs more memory.</source>
            <translation>这里没有哪项设置能让它装下：该模型需要更多内存。</translation>
        </message>
        <message>
            <source>No setting here makes it fit: choose a larger GPU.</source>
            <translation>这里没有哪项设置能让它装下：请选择显存更大的 GPU。</translation>
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
        <message>
            <source>Ask anything. Enter sends, Shift+Enter starts a new line, Esc stops.</source>
            <translation>尽管提问。Enter 发送，Shift+Enter 换行，Esc 停止。</translation>
        </message>
        <message>
            <source>Type a message… (Enter to send, Shift+Enter for a new line)</source>
            <translation>输入消息……（Enter 发送，Shift+Enter 换行）</translation>
        </message>
        <message>
            <source>Send (Enter or Ctrl+Enter)</source>
            <translation>发送（Enter 或 Ctrl+Enter）</translation>
        </message>
        <message>
            <source>No model loaded</source>
            <translation>未加载模型</translation>
        </message>
        <message>
            <source>Open a model folder…</source>
            <translation>打开模型文件夹……</translation>
        </message>
        <message>
            <source>Loaded: %1</source>
            <translation>已加载：%1</translation>
        </message>
        <message>
            <source>JSON extraction</source>
            <translation>JSON 信息抽取</translation>
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
        <message>
            <source>Could not create a conversation: %1</source>
            <translation>无法创建对话：%1</translation>
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
        <message>
            <source>Clamped to %L1: the model's context holds %L1 tokens, prompt and reply together.</source>
            <translation>已限制为 %L1：模型的上下文共 %L1 个词元，提示词与回复合计。</translation>
        </message>
        <message>
            <source>At most %L1, the model's context (prompt and reply share it).</source>
            <translation>最多 %L1，即模型的上下文长度（提示词与回复共用）。</translation>
        </message>
        <message>
            <source>Structured output:</source>
            <translation>结构化输出：</translation>
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
        <message>
            <source>Saved to the ModelScope cache: %1</source>
            <translation>保存到魔搭（ModelScope）缓存：%1</translation>
        </message>
        <message>
            <source>The model source cannot be reached: this computer seems to be offline, or the site is blocked. Try another source (a mirror or ModelScope), or open a model folder you already have.</source>
            <translation>无法连接模型来源：这台电脑似乎处于离线状态，或该网站无法访问。请换一个来源（镜像站或魔搭 ModelScope），或打开已有的模型文件夹。</translation>
        </message>
        <message>
            <source>ModelScope (modelscope.cn)</source>
            <translation>魔搭社区 ModelScope（modelscope.cn）</translation>
        </message>
        <message>
            <source>Known to run:</source>
            <translation>已验证可运行：</translation>
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
        <name>brook::EngineController</name>
        <message>
            <source>Load a model first: the endpoint serves the model this window runs.</source>
            <translation>请先加载模型：本地接口提供的就是本窗口运行的模型。</translation>
        </message>
        <message>
            <source>Load a model first.</source>
            <translation>请先加载模型。</translation>
        </message>
        <message>
            <source>The local endpoint did not start: %1</source>
            <translation>本地端点未能启动：%1</translation>
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
            <source>%1 tokens/s (peak %2 in the last minute)</source>
            <translation>%1 词元/秒（最近一分钟峰值 %2）</translation>
        </message>
        <message>
            <source>running %1 · waiting %2</source>
            <translation>运行 %1 · 等待 %2</translation>
        </message>
        <message>
            <source>Generating:</source>
            <translation>生成速度：</translation>
        </message>
        <message>
            <source>KV cache:</source>
            <translation>KV 缓存：</translation>
        </message>
        <message>
            <source>Requests:</source>
            <translation>请求数：</translation>
        </message>
        <message>
            <source>Charts and tuning…</source>
            <translation>图表与调优……</translation>
        </message>
        <message>
            <source>The Performance window: live charts, serving parameters, load tests</source>
            <translation>性能窗口：实时图表、服务参数、负载测试</translation>
        </message>
    </context>
    <context>
        <name>brook::JsonSchemaEditor</name>
        <message>
            <source>Replies are JSON that follows this schema</source>
            <translation>回复为符合此模式的 JSON</translation>
        </message>
        <message>
            <source>Structured output: the model can only produce text the schema allows</source>
            <translation>结构化输出：模型只能生成该模式允许的文本</translation>
        </message>
        <message>
            <source>A JSON schema, e.g. {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}</source>
            <translation>JSON 模式，例如 {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}</translation>
        </message>
        <message>
            <source>Off: replies are free text.</source>
            <translation>已关闭：回复为自由文本。</translation>
        </message>
        <message>
            <source>Valid: every reply will follow this schema.</source>
            <translation>有效：每条回复都将符合此模式。</translation>
        </message>
        <message>
            <source>Enter a JSON schema.</source>
            <translation>请输入 JSON 模式。</translation>
        </message>
        <message>
            <source>Cannot be used: %1</source>
            <translation>无法使用：%1</translation>
        </message>
    </context>
    <context>
        <name>brook::LoadGeneratorPanel</name>
        <message>
            <source>Load a model first.</source>
            <translation>请先加载模型。</translation>
        </message>
        <message>
            <source>Enter the server's URL.</source>
            <translation>请输入服务器地址。</translation>
        </message>
        <message>
            <source>Run %1</source>
            <translation>第 %1 次运行</translation>
        </message>
        <message>
            <source>Running "%1" against %2…</source>
            <translation>正在对 %2 运行“%1”……</translation>
        </message>
        <message>
            <source>Stopping: hanging up on the requests in flight…</source>
            <translation>正在停止：挂断进行中的请求……</translation>
        </message>
        <message>
            <source>%1 sent · %2 finished · %3 failed · %4 in flight · %5 s</source>
            <translation>已发送 %1 · 已完成 %2 · 失败 %3 · 进行中 %4 · %5 秒</translation>
        </message>
        <message>
            <source>"%1": %2 requests in %3 s, %4 output tokens/s.</source>
            <translation>“%1”：%3 秒完成 %2 个请求，输出 %4 词元/秒。</translation>
        </message>
        <message>
            <source>%1 failed, first: %2</source>
            <translation>%1 个失败，第一个：%2</translation>
        </message>
        <message>
            <source>"%1" could not run: %2</source>
            <translation>“%1”无法运行：%2</translation>
        </message>
        <message>
            <source>Target:</source>
            <translation>目标：</translation>
        </message>
        <message>
            <source>URL:</source>
            <translation>地址：</translation>
        </message>
        <message>
            <source>API:</source>
            <translation>接口：</translation>
        </message>
        <message>
            <source>Concurrent users:</source>
            <translation>并发用户数：</translation>
        </message>
        <message>
            <source>Request rate (req/s):</source>
            <translation>请求速率（请求/秒）：</translation>
        </message>
        <message>
            <source>Burstiness:</source>
            <translation>突发度：</translation>
        </message>
        <message>
            <source>Requests:</source>
            <translation>请求数：</translation>
        </message>
        <message>
            <source>Duration (s):</source>
            <translation>持续时间（秒）：</translation>
        </message>
        <message>
            <source>Prompt tokens:</source>
            <translation>提示词元数：</translation>
        </message>
        <message>
            <source>Output tokens:</source>
            <translation>输出词元数：</translation>
        </message>
        <message>
            <source>Length spread:</source>
            <translation>长度浮动：</translation>
        </message>
        <message>
            <source>Ignore EOS:</source>
            <translation>忽略 EOS：</translation>
        </message>
        <message>
            <source>Seed:</source>
            <translation>随机种子：</translation>
        </message>
        <message>
            <source>This app's local endpoint</source>
            <translation>本应用的本地端点</translation>
        </message>
        <message>
            <source>Another server</source>
            <translation>其他服务器</translation>
        </message>
        <message>
            <source>all at once</source>
            <translation>一次全部发出</translation>
        </message>
        <message>
            <source>until all are sent</source>
            <translation>直到全部发出</translation>
        </message>
        <message>
            <source>Gamma shape of the gaps between arrivals: 1 is Poisson, lower is burstier.</source>
            <translation>到达间隔的 Gamma 形状参数：1 为泊松分布，越小越突发。</translation>
        </message>
        <message>
            <source>Prompt and output lengths vary uniformly by this much around the values given.</source>
            <translation>提示和输出长度在给定值上下按此比例均匀浮动。</translation>
        </message>
        <message>
            <source>generate exactly the output length</source>
            <translation>严格生成指定的输出长度</translation>
        </message>
        <message>
            <source>Run</source>
            <translation>运行</translation>
        </message>
        <message>
            <source>Stop</source>
            <translation>停止</translation>
        </message>
        <message>
            <source>Clear results</source>
            <translation>清除结果</translation>
        </message>
        <message>
            <source>Successful requests</source>
            <translation>成功请求</translation>
        </message>
        <message>
            <source>Failed requests</source>
            <translation>失败请求</translation>
        </message>
        <message>
            <source>Duration (s)</source>
            <translation>耗时（秒）</translation>
        </message>
        <message>
            <source>Requests/s</source>
            <translation>请求/秒</translation>
        </message>
        <message>
            <source>Output tokens/s</source>
            <translation>输出词元/秒</translation>
        </message>
        <message>
            <source>Total tokens/s</source>
            <translation>总词元/秒</translation>
        </message>
        <message>
            <source>Peak output tokens/s</source>
            <translation>峰值输出词元/秒</translation>
        </message>
        <message>
            <source>Peak concurrent requests</source>
            <translation>峰值并发请求</translation>
        </message>
        <message>
            <source>Mean %1 (ms)</source>
            <translation>平均 %1（毫秒）</translation>
        </message>
        <message>
            <source>Median %1 (ms)</source>
            <translation>中位 %1（毫秒）</translation>
        </message>
        <message>
            <source>P99 %1 (ms)</source>
            <translation>P99 %1（毫秒）</translation>
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
        <message>
            <source>Performance…</source>
            <translation>性能……</translation>
        </message>
        <message>
            <source>Live charts, serving parameters, load generator and request inspector (Ctrl+Shift+D)</source>
            <translation>实时图表、服务参数、负载生成器与请求检查器（Ctrl+Shift+D）</translation>
        </message>
        <message>
            <source>Load a model first; new parameters apply by reloading it.</source>
            <translation>请先加载模型；新参数通过重新加载模型生效。</translation>
        </message>
        <message>
            <source>The new serving parameters are in effect.</source>
            <translation>新的服务参数已生效。</translation>
        </message>
        <message>
            <source>The new parameters did not load; the model runs on with the previous ones:
%1</source>
            <translation>新参数未能加载，模型继续使用之前的参数运行：
%1</translation>
        </message>
        <message>
            <source>The new serving parameters did not load.</source>
            <translation>新的服务参数未能加载。</translation>
        </message>
        <message>
            <source>%1 keeps running.</source>
            <translation>%1 继续运行。</translation>
        </message>
        <message>
            <source>The model did not load</source>
            <translation>模型未能加载</translation>
        </message>
        <message>
            <source>%1 keeps running; your chats are unchanged.</source>
            <translation>%1 继续运行，您的对话保持不变。</translation>
        </message>
        <message>
            <source>Enter sends (Shift+Enter for a new line)</source>
            <translation>Enter 发送（Shift+Enter 换行）</translation>
        </message>
        <message>
            <source>&amp;Go</source>
            <translation>转到(&amp;G)</translation>
        </message>
        <message>
            <source>Search conversations</source>
            <translation>搜索对话</translation>
        </message>
        <message>
            <source>Conversation list</source>
            <translation>对话列表</translation>
        </message>
        <message>
            <source>Message box</source>
            <translation>消息输入框</translation>
        </message>
        <message>
            <source>Engine at a glance</source>
            <translation>引擎概览</translation>
        </message>
        <message>
            <source>Split view: show this chat beside the others</source>
            <translation>分屏：将此对话并排显示</translation>
        </message>
        <message>
            <source>Move this chat to the right half</source>
            <translation>将此对话移到右半边</translation>
        </message>
        <message>
            <source>Move this chat to the left half</source>
            <translation>将此对话移到左半边</translation>
        </message>
        <message>
            <source>Models…</source>
            <translation>模型……</translation>
        </message>
        <message>
            <source>The models on this disk: load, unload, delete, show in the file manager</source>
            <translation>本机上的模型：加载、卸载、删除、在文件管理器中显示</translation>
        </message>
        <message>
            <source>The model was unloaded.</source>
            <translation>模型已卸载。</translation>
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
        <message>
            <source>context full at %L1 tokens</source>
            <translation>上下文已满（%L1 个词元）</translation>
        </message>
        <message>
            <source>%L1 of %L2 prompt tokens cached</source>
            <translation>提示词 %L2 个词元中 %L1 个来自缓存</translation>
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
        <name>brook::ModelsDialog</name>
        <message>
            <source>%1 (loaded)</source>
            <translation>%1（已加载）</translation>
        </message>
        <message>
            <source>unknown</source>
            <translation>未知</translation>
        </message>
        <message>
            <source>never</source>
            <translation>从未</translation>
        </message>
        <message>
            <source>Delete model</source>
            <translation>删除模型</translation>
        </message>
        <message>
            <source>Delete %1 (%2) from this disk?
%3</source>
            <translation>从本机删除 %1（%2）？
%3</translation>
        </message>
        <message>
            <source>Could not delete %1.</source>
            <translation>无法删除 %1。</translation>
        </message>
        <message>
            <source>Models</source>
            <translation>模型</translation>
        </message>
        <message>
            <source>Models in the Hugging Face cache and the folders opened here.</source>
            <translation>Hugging Face 缓存中的模型，以及在此打开过的文件夹。</translation>
        </message>
        <message>
            <source>Model</source>
            <translation>模型</translation>
        </message>
        <message>
            <source>Size</source>
            <translation>大小</translation>
        </message>
        <message>
            <source>Quantization</source>
            <translation>量化</translation>
        </message>
        <message>
            <source>Last used</source>
            <translation>上次使用</translation>
        </message>
        <message>
            <source>Folder</source>
            <translation>文件夹</translation>
        </message>
        <message>
            <source>Load</source>
            <translation>载入</translation>
        </message>
        <message>
            <source>Unload</source>
            <translation>卸载</translation>
        </message>
        <message>
            <source>Delete…</source>
            <translation>删除……</translation>
        </message>
        <message>
            <source>Show in file manager</source>
            <translation>在文件管理器中显示</translation>
        </message>
        <message>
            <source>Close</source>
            <translation>关闭</translation>
        </message>
    </context>
    <context>
        <name>brook::PerformanceDashboard</name>
        <message>
            <source>healthy</source>
            <translation>正常</translation>
        </message>
        <message>
            <source>not ready (HTTP %1)</source>
            <translation>未就绪（HTTP %1）</translation>
        </message>
        <message>
            <source>connecting…</source>
            <translation>正在连接……</translation>
        </message>
        <message>
            <source>Resume</source>
            <translation>继续</translation>
        </message>
        <message>
            <source>Pause</source>
            <translation>暂停</translation>
        </message>
        <message>
            <source>Watching %1</source>
            <translation>正在监视 %1</translation>
        </message>
        <message>
            <source>No model loaded: load one, or watch a remote server.</source>
            <translation>未加载模型：请加载一个，或监视远程服务器。</translation>
        </message>
        <message>
            <source>This app's engine (%1)</source>
            <translation>本应用的引擎（%1）</translation>
        </message>
        <message>
            <source>%1 running · %2 waiting · KV cache %3% · %4 tokens/s</source>
            <translation>运行 %1 · 等待 %2 · KV 缓存 %3% · %4 词元/秒</translation>
        </message>
        <message>
            <source>paused</source>
            <translation>已暂停</translation>
        </message>
        <message>
            <source>Export the dashboard as CSV</source>
            <translation>将仪表盘导出为 CSV</translation>
        </message>
        <message>
            <source>CSV files (*.csv)</source>
            <translation>CSV 文件 (*.csv)</translation>
        </message>
        <message>
            <source>Could not write %1: %2</source>
            <translation>无法写入 %1：%2</translation>
        </message>
        <message>
            <source>Export the charts as PNG</source>
            <translation>将图表导出为 PNG</translation>
        </message>
        <message>
            <source>PNG images (*.png)</source>
            <translation>PNG 图片 (*.png)</translation>
        </message>
        <message>
            <source>Could not write %1.</source>
            <translation>无法写入 %1。</translation>
        </message>
        <message>
            <source>This app's engine</source>
            <translation>本应用的引擎</translation>
        </message>
        <message>
            <source>Remote server</source>
            <translation>远程服务器</translation>
        </message>
        <message>
            <source>http://host:8000 (vLLM or Brook)</source>
            <translation>http://主机:8000（vLLM 或 Brook）</translation>
        </message>
        <message>
            <source>API key (optional)</source>
            <translation>API 密钥（可选）</translation>
        </message>
        <message>
            <source>Watch</source>
            <translation>监视</translation>
        </message>
        <message>
            <source>Last minute</source>
            <translation>最近 1 分钟</translation>
        </message>
        <message>
            <source>Last 5 minutes</source>
            <translation>最近 5 分钟</translation>
        </message>
        <message>
            <source>Last 30 minutes</source>
            <translation>最近 30 分钟</translation>
        </message>
        <message>
            <source>Export CSV…</source>
            <translation>导出 CSV……</translation>
        </message>
        <message>
            <source>Export PNG…</source>
            <translation>导出 PNG……</translation>
        </message>
        <message>
            <source>Memory (GiB)</source>
            <translation>内存（GiB）</translation>
        </message>
        <message>
            <source>Weights</source>
            <translation>权重</translation>
        </message>
        <message>
            <source>KV cache</source>
            <translation>KV 缓存</translation>
        </message>
        <message>
            <source>Activations and graphs</source>
            <translation>激活与计算图</translation>
        </message>
        <message>
            <source>Free</source>
            <translation>空闲</translation>
        </message>
        <message>
            <source>Requests</source>
            <translation>请求</translation>
        </message>
        <message>
            <source>Running</source>
            <translation>运行中</translation>
        </message>
        <message>
            <source>Waiting</source>
            <translation>等待中</translation>
        </message>
        <message>
            <source>Preempted per second</source>
            <translation>每秒抢占</translation>
        </message>
        <message>
            <source>Time to first token and end-to-end (ms)</source>
            <translation>首词元时间与端到端延迟（毫秒）</translation>
        </message>
        <message>
            <source>TTFT p50</source>
            <translation>首词元 p50</translation>
        </message>
        <message>
            <source>TTFT p95</source>
            <translation>首词元 p95</translation>
        </message>
        <message>
            <source>E2E p50</source>
            <translation>端到端 p50</translation>
        </message>
        <message>
            <source>E2E p95</source>
            <translation>端到端 p95</translation>
        </message>
        <message>
            <source>Inter-token latency (ms)</source>
            <translation>词元间延迟（毫秒）</translation>
        </message>
        <message>
            <source>ITL p50</source>
            <translation>词元间 p50</translation>
        </message>
        <message>
            <source>ITL p95</source>
            <translation>词元间 p95</translation>
        </message>
        <message>
            <source>Throughput (tokens/s)</source>
            <translation>吞吐量（词元/秒）</translation>
        </message>
        <message>
            <source>Prompt</source>
            <translation>提示</translation>
        </message>
        <message>
            <source>Generation</source>
            <translation>生成</translation>
        </message>
        <message>
            <source>tokens/s</source>
            <translation>词元/秒</translation>
        </message>
        <message>
            <source>Memory (MiB)</source>
            <translation>内存（MiB）</translation>
        </message>
        <message>
            <source>prefix cache hit rate %1%</source>
            <translation>前缀缓存命中率 %1%</translation>
        </message>
        <message>
            <source>KV cache used and prefix cache hits (%)</source>
            <translation>KV 缓存占用与前缀缓存命中（%）</translation>
        </message>
        <message>
            <source>Prefix cache hits</source>
            <translation>前缀缓存命中</translation>
        </message>
    </context>
    <context>
        <name>brook::PerformanceWindow</name>
        <message>
            <source>Reloading the model: %1</source>
            <translation>正在重新加载模型：%1</translation>
        </message>
        <message>
            <source>Brook — performance</source>
            <translation>Brook — 性能</translation>
        </message>
        <message>
            <source>Serving parameters</source>
            <translation>服务参数</translation>
        </message>
        <message>
            <source>Load generator</source>
            <translation>负载生成器</translation>
        </message>
        <message>
            <source>Requests</source>
            <translation>请求</translation>
        </message>
        <message>
            <source>Compare profiles:</source>
            <translation>比较配置：</translation>
        </message>
        <message>
            <source>Apply each and run this load</source>
            <translation>依次应用并运行此负载</translation>
        </message>
        <message>
            <source>Reloads the engine with the first profile, runs the load above, then does the same with the second; the results end up side by side.</source>
            <translation>用第一个配置重新加载引擎并运行上面的负载，再对第二个配置重复；结果并排显示。</translation>
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
        <name>brook::RemoteMetricsSource</name>
        <message>
            <source>Cannot reach %1: %2</source>
            <translation>无法连接 %1：%2</translation>
        </message>
        <message>
            <source>%1/metrics answered %2: %3</source>
            <translation>%1/metrics 返回 %2：%3</translation>
        </message>
        <message>
            <source>%1/metrics is not Prometheus text: %2</source>
            <translation>%1/metrics 不是 Prometheus 文本：%2</translation>
        </message>
    </context>
    <context>
        <name>brook::RequestInspector</name>
        <message>
            <source>queued</source>
            <translation>排队中</translation>
        </message>
        <message>
            <source>prefill</source>
            <translation>预填充</translation>
        </message>
        <message>
            <source>decode</source>
            <translation>解码</translation>
        </message>
        <message>
            <source>preempted</source>
            <translation>被抢占</translation>
        </message>
        <message>
            <source>chat pane</source>
            <translation>聊天窗格</translation>
        </message>
        <message>
            <source>API client</source>
            <translation>API 客户端</translation>
        </message>
        <message>
            <source>warm-up</source>
            <translation>预热</translation>
        </message>
        <message>
            <source>unknown</source>
            <translation>未知</translation>
        </message>
        <message>
            <source>%1 (%2×)</source>
            <translation>%1（%2 次）</translation>
        </message>
        <message>
            <source>Cancel</source>
            <translation>取消</translation>
        </message>
        <message>
            <source>Cancelling…</source>
            <translation>正在取消……</translation>
        </message>
        <message>
            <source>%1 requests: %2 queued, %3 in prefill, %4 decoding, %5 preempted</source>
            <translation>%1 个请求：排队 %2，预填充 %3，解码 %4，被抢占 %5</translation>
        </message>
        <message>
            <source>No model loaded.</source>
            <translation>未加载模型。</translation>
        </message>
        <message>
            <source>ID</source>
            <translation>ID</translation>
        </message>
        <message>
            <source>Source</source>
            <translation>来源</translation>
        </message>
        <message>
            <source>State</source>
            <translation>状态</translation>
        </message>
        <message>
            <source>Prompt tokens</source>
            <translation>提示词元</translation>
        </message>
        <message>
            <source>Generated</source>
            <translation>已生成</translation>
        </message>
        <message>
            <source>Queued (s)</source>
            <translation>排队（秒）</translation>
        </message>
        <message>
            <source>Prefill (s)</source>
            <translation>预填充（秒）</translation>
        </message>
        <message>
            <source>Decode (s)</source>
            <translation>解码（秒）</translation>
        </message>
        <message>
            <source>Preempted (s)</source>
            <translation>被抢占（秒）</translation>
        </message>
    </context>
    <context>
        <name>brook::ServingParametersPanel</name>
        <message>
            <source>Reloading…</source>
            <translation>正在重新加载……</translation>
        </message>
        <message>
            <source>Apply and reload the model</source>
            <translation>应用并重新加载模型</translation>
        </message>
        <message>
            <source>Saved the profile "%1".</source>
            <translation>已保存配置“%1”。</translation>
        </message>
        <message>
            <source>Loaded the profile "%1": apply it to reload the model.</source>
            <translation>已载入配置“%1”：应用后将重新加载模型。</translation>
        </message>
        <message>
            <source>Save serving profile</source>
            <translation>保存服务配置</translation>
        </message>
        <message>
            <source>Profile name:</source>
            <translation>配置名称：</translation>
        </message>
        <message>
            <source>Export as brook-serve YAML</source>
            <translation>导出为 brook-serve YAML</translation>
        </message>
        <message>
            <source>YAML files (*.yaml *.yml)</source>
            <translation>YAML 文件 (*.yaml *.yml)</translation>
        </message>
        <message>
            <source>Wrote %1: run brook-serve --config %1</source>
            <translation>已写入 %1：运行 brook-serve --config %1</translation>
        </message>
        <message>
            <source>Could not write %1: %2</source>
            <translation>无法写入 %1：%2</translation>
        </message>
        <message>
            <source>Import a brook-serve YAML file</source>
            <translation>导入 brook-serve YAML 文件</translation>
        </message>
        <message>
            <source>Could not import %1: %2</source>
            <translation>无法导入 %1：%2</translation>
        </message>
        <message>
            <source>Device:</source>
            <translation>设备：</translation>
        </message>
        <message>
            <source>dtype:</source>
            <translation>数据类型：</translation>
        </message>
        <message>
            <source>Quantization:</source>
            <translation>量化：</translation>
        </message>
        <message>
            <source>max-model-len:</source>
            <translation>max-model-len（最大上下文）：</translation>
        </message>
        <message>
            <source>max-num-seqs:</source>
            <translation>max-num-seqs（最大并发序列）：</translation>
        </message>
        <message>
            <source>max-num-batched-tokens:</source>
            <translation>max-num-batched-tokens（每步词元）：</translation>
        </message>
        <message>
            <source>gpu-memory-utilization:</source>
            <translation>gpu-memory-utilization（显存占比）：</translation>
        </message>
        <message>
            <source>CPU KV cache (GiB):</source>
            <translation>CPU KV 缓存（GiB）：</translation>
        </message>
        <message>
            <source>Block size:</source>
            <translation>块大小：</translation>
        </message>
        <message>
            <source>CUDA graphs:</source>
            <translation>CUDA 图：</translation>
        </message>
        <message>
            <source>Scheduling policy:</source>
            <translation>调度策略：</translation>
        </message>
        <message>
            <source>Plan for a GPU of (GiB):</source>
            <translation>按此显存规划（GiB）：</translation>
        </message>
        <message>
            <source>none</source>
            <translation>无</translation>
        </message>
        <message>
            <source>the model's own</source>
            <translation>模型自身的长度</translation>
        </message>
        <message>
            <source>capture decode steps (off: enforce-eager)</source>
            <translation>捕获解码步骤（关闭即 enforce-eager）</translation>
        </message>
        <message>
            <source>Prompt plus output tokens of one request.</source>
            <translation>单个请求的提示加输出词元数。</translation>
        </message>
        <message>
            <source>Requests batched together at most.</source>
            <translation>最多合批处理的请求数。</translation>
        </message>
        <message>
            <source>Tokens computed in one engine step at most: prefill chunks and decodes share it.</source>
            <translation>引擎每步最多计算的词元数：预填充分块与解码共享此额度。</translation>
        </message>
        <message>
            <source>Fraction of the GPU's memory Brook may take; the KV cache gets what weights and activations leave.</source>
            <translation>Brook 可使用的 GPU 显存比例；权重和激活之外的部分归 KV 缓存。</translation>
        </message>
        <message>
            <source>Load</source>
            <translation>载入</translation>
        </message>
        <message>
            <source>Save as…</source>
            <translation>另存为……</translation>
        </message>
        <message>
            <source>Delete</source>
            <translation>删除</translation>
        </message>
        <message>
            <source>Export YAML…</source>
            <translation>导出 YAML……</translation>
        </message>
        <message>
            <source>Import YAML…</source>
            <translation>导入 YAML……</translation>
        </message>
        <message>
            <source>Planning for %1 (%2 layers, %3 KV heads × %4)</source>
            <translation>正在为 %1 规划（%2 层，%3 个 KV 头 × %4）</translation>
        </message>
        <message>
            <source>Planning for the ERNIE-4.5-0.3B shape (no model loaded).</source>
            <translation>按 ERNIE-4.5-0.3B 的结构规划（未加载模型）。</translation>
        </message>
        <message>
            <source>Model to plan for:</source>
            <translation>规划所用的模型：</translation>
        </message>
        <message>
            <source>the loaded model</source>
            <translation>已加载的模型</translation>
        </message>
        <message>
            <source>Planning for the ERNIE-4.5-0.3B shape.</source>
            <translation>按 ERNIE-4.5-0.3B 的结构规划。</translation>
        </message>
        <message>
            <source>Quantization %1 does not suit the loaded model; none is used.</source>
            <translation>量化方式 %1 不适用于已加载的模型，将不使用量化。</translation>
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
