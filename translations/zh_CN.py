#!/usr/bin/env python3
"""Fills translations/brook_zh_CN.ts with the Simplified Chinese strings below.

Run after `lupdate` (see translations/README.md): every source string must have an entry here, or
the `test_translations` test fails. Keys are source strings; a (context, source) key wins over a
plain one where a word needs a different translation in one place.
"""
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ZH = {
    # ConversationExporter (Markdown export)
    "Conversation": "对话",
    "System": "系统",
    "User": "用户",
    "Assistant": "助手",
    "%1 tokens · first token %2 s · %3 tokens/s": "%1 个词元 · 首词元 %2 秒 · %3 词元/秒",
    # Chat pane
    "New chat": "新对话",
    "Preset:": "预设：",
    "Settings": "设置",
    "System prompt and sampling for this conversation": "本对话的系统提示词与采样参数",
    "Ask anything. Ctrl+Enter sends, Esc stops.": "尽管提问。Ctrl+Enter 发送，Esc 停止。",
    "Type a message… (Ctrl+Enter to send)": "输入消息……（Ctrl+Enter 发送）",
    "Send": "发送",
    "Send (Ctrl+Enter)": "发送（Ctrl+Enter）",
    "Stop": "停止",
    "Stop generating (Esc)": "停止生成（Esc）",
    "(none)": "（无）",
    "General": "通用",
    "Writing": "写作",
    "Summary": "总结",
    # Chat session
    "Could not save the message: %1": "无法保存消息：%1",
    "Wait for the answer or stop it before sending.": "请等待回答完成，或先停止生成再发送。",
    "Open a model first.": "请先打开一个模型。",
    "This conversation (%1 tokens) no longer fits the model's context of %2 tokens. Start a new chat or delete earlier messages.":
        "本对话（%1 个词元）已超出模型 %2 个词元的上下文长度。请新建对话或删除较早的消息。",
    "The engine refused the request: %1": "引擎拒绝了该请求：%1",
    "Could not delete the message: %1": "无法删除消息：%1",
    # Conversation settings
    "Conversation settings": "对话设置",
    "System prompt:": "系统提示词：",
    "Input template:": "输入模板：",
    "Temperature:": "温度：",
    "Top-p:": "Top-p：",
    "Top-k:": "Top-k：",
    "Max tokens:": "最大词元数：",
    "Repetition penalty:": "重复惩罚：",
    "Presence penalty:": "存在惩罚：",
    "Frequency penalty:": "频率惩罚：",
    "Seed:": "随机种子：",
    "Optional: how the assistant should behave": "可选：助手应如何表现",
    "Optional: wraps each message; {input} marks where your text goes": "可选：包裹每条消息；{input} 表示你的文字所在位置",
    "off": "关闭",
    "random": "随机",
    "Model defaults": "模型默认值",
    "Sampling values from the model's generation_config.json": "采用模型 generation_config.json 中的采样参数",
    # Code blocks
    "Copied": "已复制",
    "Copy": "复制",
    "Copy this code": "复制这段代码",
    # Conversation list
    "%1\nLast message: %2": "%1\n最后一条消息：%2",
    "Open": "打开",
    "Open side by side": "并排打开",
    "Rename…": "重命名……",
    "Export…": "导出……",
    "Delete": "删除",
    "Start a new conversation (Ctrl+N)": "开始新对话（Ctrl+N）",
    "Search conversations": "搜索对话",
    # Download dialog
    "Saved to the Hugging Face cache: %1": "保存到 Hugging Face 缓存：%1",
    "Connecting to %1…": "正在连接 %1……",
    "File %1 of %2: %3": "第 %1 个文件，共 %2 个：%3",
    "%1 of %2": "%1 / %2",
    "%1/s": "%1/秒",
    "%1 min %2 s left": "剩余 %1 分 %2 秒",
    "Downloaded to %1": "已下载到 %1",
    "The model source cannot be reached: this computer seems to be offline, or the site is blocked. Try a mirror, or open a model folder you already have.":
        "无法连接模型来源：这台电脑似乎处于离线状态，或该网站无法访问。请尝试镜像站，或打开已有的模型文件夹。",
    "The download failed: %1": "下载失败：%1",
    "Cancelled. What was downloaded is kept: Download resumes from there.": "已取消。已下载的部分会保留，再次下载时将从断点继续。",
    "Download a model": "下载模型",
    "Model:": "模型：",
    "Source:": "来源：",
    "Hugging Face (huggingface.co)": "Hugging Face（huggingface.co）",
    "Mirror (hf-mirror.com)": "镜像站（hf-mirror.com）",
    "Other endpoint (HF_ENDPOINT)": "其他地址（HF_ENDPOINT）",
    "https://your-mirror.example": "https://你的镜像地址",
    "Download": "下载",
    "Cancel": "取消",
    "Open a local folder instead…": "改为打开本地文件夹……",
    "Close": "关闭",
    # Local endpoint
    "Requests in progress: %1 · completions served: %2": "进行中的请求：%1 · 已完成的请求：%2",
    "Serve the OpenAI-compatible API": "提供 OpenAI 兼容接口",
    "Other programs can then use this model; chats and API requests share the engine": "其他程序也可以使用此模型；对话与接口请求共用同一个引擎",
    "Host:": "主机：",
    "Port:": "端口：",
    "API key:": "API 密钥：",
    "Base URL:": "基础地址：",
    "required for this host": "此主机地址必须设置",
    "optional on this computer": "仅本机访问时可不设置",
    "Warning: %1 is reachable from other computers. An API key is required.": "警告：其他电脑可以访问 %1，必须设置 API 密钥。",
    "Enter a host to listen on.": "请输入要监听的主机地址。",
    "The port must be between 0 (any free port) and 65535.": "端口必须在 0（任意空闲端口）到 65535 之间。",
    "Listening on %1 lets other computers use the model: set an API key first.": "监听 %1 会让其他电脑使用此模型：请先设置 API 密钥。",
    # Engine monitor
    "No model loaded": "未加载模型",
    "%1 tokens/s · KV cache %2% · running %3 · waiting %4": "%1 词元/秒 · KV 缓存 %2% · 运行中 %3 · 等待中 %4",
    "Generated tokens/s": "生成速度（词元/秒）",
    "KV cache used (%)": "KV 缓存占用（%）",
    # Log view
    "All messages": "全部消息",
    "Info and above": "信息及以上",
    "Warnings and errors": "警告和错误",
    "Errors only": "仅错误",
    "Clear": "清空",
    # Main window
    "Brook — %1": "Brook — %1",
    "Brook": "Brook",
    "&File": "文件(&F)",
    "Recent models": "最近使用的模型",
    "Export conversation": "导出对话",
    "&Chat": "对话(&C)",
    "&View": "视图(&V)",
    "Language": "语言",
    "Theme": "主题",
    "&Help": "帮助(&H)",
    "Open model folder…": "打开模型文件夹……",
    "Download model…": "下载模型……",
    "Import conversation (JSON)…": "导入对话（JSON）……",
    "As Markdown…": "导出为 Markdown……",
    "As JSON (OpenAI messages)…": "导出为 JSON（OpenAI messages）……",
    "Quit": "退出",
    "Regenerate": "重新生成",
    "Conversation settings…": "对话设置……",
    "Prompt presets…": "提示词预设……",
    "Choose a preset automatically by keywords": "根据关键词自动选择预设",
    "Close chat": "关闭对话",
    "Move to the other side": "移到另一侧",
    "Follow the system": "跟随系统",
    "Light": "浅色",
    "Dark": "深色",
    "About Brook": "关于 Brook",
    "Local endpoint": "本地接口",
    "Engine monitor": "引擎监视器",
    "Log": "日志",
    "Toolbar": "工具栏",
    "(none yet)": "（暂无）",
    "A model is already loading.": "已有模型正在加载。",
    "Open a model folder": "打开模型文件夹",
    "%1 is ready.": "%1 已就绪。",
    "Could not load %1:\n%2": "无法加载 %1：\n%2",
    "The model did not load.": "模型未能加载。",
    "Could not create a conversation: %1": "无法创建对话：%1",
    "Import a conversation": "导入对话",
    "JSON (*.json)": "JSON（*.json）",
    "Import": "导入",
    "Cannot read %1: %2": "无法读取 %1：%2",
    "%1 is not a conversation Brook can import: %2": "%1 不是 Brook 可以导入的对话：%2",
    "Could not store the conversation: %1": "无法保存对话：%1",
    "Markdown (*.md)": "Markdown（*.md）",
    "Export": "导出",
    "Cannot write %1: %2": "无法写入 %1：%2",
    "Saved %1": "已保存 %1",
    "Rename": "重命名",
    "Title:": "标题：",
    "Delete conversation": "删除对话",
    "Delete this conversation and all its messages?": "删除此对话及其全部消息？",
    "Load a model first: the endpoint serves the model this window runs.": "请先加载模型：本地接口提供的就是本窗口运行的模型。",
    "%1 on %2": "%1（%2）",
    "running %1 · waiting %2 · KV cache %3%": "运行中 %1 · 等待中 %2 · KV 缓存 %3%",
    "API on :%1": "接口端口 :%1",
    "<b>Brook %1</b><br>Runs ERNIE-4.5 locally: a C++ engine with paged KV cache and continuous batching, an OpenAI-compatible endpoint and this desktop app.<br>Backend: %2":
        "<b>Brook %1</b><br>在本机运行 ERNIE-4.5：带分页 KV 缓存与连续批处理的 C++ 引擎、OpenAI 兼容接口以及本桌面应用。<br>后端：%2",
    "This language is not available.": "此语言不可用。",
    # Message bubbles
    "Generating… %1 tokens": "生成中…… %1 个词元",
    "Thinking…": "思考中……",
    "stopped": "已停止",
    "cut at max tokens": "达到最大词元数而截断",
    "You": "你",
    "Previous version": "上一个版本",
    "Next version": "下一个版本",
    "Save and resend": "保存并重新发送",
    "Copy message": "复制消息",
    "Edit and resend (the original stays as a branch)": "编辑并重新发送（原消息保留为分支）",
    "Regenerate (the current answer stays as a branch)": "重新生成（当前回答保留为分支）",
    "Delete this message and its replies": "删除此消息及其回复",
    # Model panel
    "Checking the model folder…": "正在检查模型文件夹……",
    "Reading weights and allocating the KV cache…": "正在读取权重并分配 KV 缓存……",
    "Warming up…": "正在预热……",
    "Ready": "就绪",
    "Welcome to Brook": "欢迎使用 Brook",
    "Brook runs ERNIE-4.5 on this computer: nothing you type leaves it. Download the model (about 0.7 GB) or open a model folder you already have.":
        "Brook 在这台电脑上运行 ERNIE-4.5：你输入的内容不会离开本机。请下载模型（约 0.7 GB），或打开已有的模型文件夹。",
    "Download ERNIE-4.5-0.3B-PT…": "下载 ERNIE-4.5-0.3B-PT……",
    "Open a model folder…": "打开模型文件夹……",
    "Recent models (double-click to load):": "最近使用的模型（双击加载）：",
    "This will take about %1 for the weights and %2 for the KV cache (%3).": "预计占用：权重约 %1，KV 缓存约 %2（%3）。",
    "This will take about %1 for the weights, and most of the free GPU memory for the KV cache (%2).":
        "预计占用：权重约 %1，KV 缓存将使用大部分空闲显存（%2）。",
    # Preset editor
    "New preset": "新预设",
    "Prompt presets": "提示词预设",
    "Add": "添加",
    "Restore built-in presets": "恢复内置预设",
    "Name:": "名称：",
    "Keywords:": "关键词：",
    "Set sampling": "设置采样参数",
    "{input} marks where the message goes; empty: the message as typed": "{input} 表示消息所在位置；留空则按原样发送",
    "Comma-separated; any of them in a message picks this preset": "用逗号分隔；消息中出现任意一个即选用此预设",
    "The conversation is no longer in the history.": "该对话已不在历史记录中。",
    # main()
    "Cannot open the conversation history:\n%1": "无法打开对话历史：\n%1",
}

CONTEXT_ZH = {
    ("brook::MainWindow", "Send"): "发送",
    ("brook::ConversationListPanel", "Delete"): "删除",
}


def main() -> int:
    path = Path(__file__).with_name("brook_zh_CN.ts")
    tree = ET.parse(path)
    missing = []
    for context in tree.getroot().findall("context"):
        name = context.findtext("name")
        for message in context.findall("message"):
            source = message.findtext("source")
            translation = message.find("translation")
            text = CONTEXT_ZH.get((name, source), ZH.get(source))
            if text is None:
                missing.append(f"{name}: {source!r}")
                continue
            translation.text = text
            translation.attrib.pop("type", None)
    ET.indent(tree, space="    ")
    with open(path, "wb") as out:
        out.write(b'<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n')
        tree.write(out, encoding="utf-8", xml_declaration=False)
        out.write(b"\n")
    for m in missing:
        print("no translation for", m, file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
